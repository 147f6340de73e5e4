package bench

import (
	"github.com/prometheus/procfs"
)

// CPU is the processor time a measurement cost per unit of work (a visit, a
// message), in microseconds: in this process, and in the PostgreSQL and
// RabbitMQ servers when they run on this host. On two shared cores these
// say where a throughput ceiling comes from; a server that is elsewhere, or
// a host without /proc, reports 0.
type CPU struct {
	RevisitMicros  float64 `json:"revisit_cpu_us"`
	PostgresMicros float64 `json:"postgres_cpu_us"`
	RabbitMQMicros float64 `json:"rabbitmq_cpu_us"`
}

// cpuSample is the processor time used so far, in seconds.
type cpuSample struct{ self, postgres, rabbitmq float64 }

// sampleCPU reads the processor time of this process and of the local
// servers from /proc.
func sampleCPU() cpuSample {
	s := serversCPU()
	s.self = selfCPU()
	return s
}

// selfCPU reads the processor time of this process.
func selfCPU() float64 {
	if self, err := procfs.Self(); err == nil {
		if st, err := self.Stat(); err == nil {
			return st.CPUTime()
		}
	}
	return 0
}

// serversCPU reads the processor time of the local servers, scanning every
// process of /proc (~2 ms of this process's time with 80 of them). A server
// process's time includes that of its reaped children, so that a
// PostgreSQL backend which exits between two samples still counts: the
// postmaster inherits its time when it reaps it.
func serversCPU() cpuSample {
	var s cpuSample
	procs, err := procfs.AllProcs()
	if err != nil {
		return s
	}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // gone since the listing
		}
		used := st.CPUTime() + float64(st.CUTime+st.CSTime)/userHZ
		switch st.Comm {
		case "postgres": // the postmaster and its backends
			s.postgres += used
		case "beam.smp": // RabbitMQ's Erlang VM (any local one counts)
			s.rabbitmq += used
		}
	}
	return s
}

// userHZ is the unit of the children times of /proc/PID/stat (procfs's
// CPUTime uses the same).
const userHZ = 100

// per returns the time used from s to end per unit of work, in µs. A
// server's sum can fall when one of its processes exits during the span
// (an exited process that its parent has not reaped yet reads no time):
// a fall counts as none.
func (s cpuSample) per(end cpuSample, units int64) CPU {
	if units <= 0 {
		return CPU{}
	}
	us := func(from, to float64) float64 { return max(to-from, 0) * 1e6 / float64(units) }
	return CPU{RevisitMicros: us(s.self, end.self), PostgresMicros: us(s.postgres, end.postgres),
		RabbitMQMicros: us(s.rabbitmq, end.rabbitmq)}
}

// usage is the processor time used so far, or over spans of a run, in
// seconds: by this process and the local servers (cpuSample), and by the
// whole machine, busy and in all (every processor's time, idle included),
// with how many processors it has.
type usage struct {
	cpu        cpuSample
	busy, time float64
	cores      int
}

// beginSpan and endSpan read the processor time used so far at the start
// and at the end of a span of a run. Each reads what this process and the
// machine used on the far side of its scan of the servers (serversCPU), so
// that the span does not count the scan. On a host without /proc, the
// machine's part is zero.
func beginSpan() usage {
	u := usage{cpu: serversCPU()}
	u.cpu.self = selfCPU()
	u.readMachine()
	return u
}

func endSpan() usage {
	var u usage
	u.readMachine()
	self := selfCPU()
	u.cpu = serversCPU()
	u.cpu.self = self
	return u
}

// readMachine reads the whole machine's processor time into u.
func (u *usage) readMachine() {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return
	}
	if st, err := fs.Stat(); err == nil {
		c := st.CPUTotal
		u.busy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
		u.time = u.busy + c.Idle + c.Iowait
		u.cores = len(st.CPU)
	}
}

// plus returns u with the time used from start to end added.
func (u usage) plus(start, end usage) usage {
	return usage{
		cpu: cpuSample{self: u.cpu.self + end.cpu.self - start.cpu.self,
			postgres: u.cpu.postgres + end.cpu.postgres - start.cpu.postgres,
			rabbitmq: u.cpu.rabbitmq + end.cpu.rabbitmq - start.cpu.rabbitmq},
		busy: u.busy + end.busy - start.busy, time: u.time + end.time - start.time, cores: end.cores}
}

// busyCores returns how many of the machine's processors u kept busy on
// average: its busy share of all processors' time, times their number.
func (u usage) busyCores() float64 {
	if u.time <= 0 {
		return 0
	}
	return u.busy / u.time * float64(u.cores)
}
