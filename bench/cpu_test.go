package bench

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// spin keeps this process busy until it has spent d more processor time,
// as the kernel counts it for getrusage (to the microsecond), however
// busy the machine is.
func spin(t *testing.T, d time.Duration) {
	used := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for end := used() + d; used() < end; {
	}
}

// The usage over spans counts what this process spent in them and not
// between them, and sees the machine busy meanwhile: two spans of 300 ms
// of processor time, with 200 ms spent between them, come to 0.6 s, one
// processor at least busy during the spans.
func TestUsageOverSpans(t *testing.T) {
	if beginSpan().cores == 0 {
		t.Skip("no /proc on this host: nothing to measure with")
	}
	var used usage
	for range 2 {
		start := beginSpan()
		spin(t, 300*time.Millisecond)
		used = used.plus(start, endSpan())
		spin(t, 200*time.Millisecond)
	}
	// /proc counts processor time in ticks of 10 ms: a few of slack.
	if self := used.cpu.self; self < 0.56 || self > 0.66 {
		t.Fatalf("this process spent %.2f s in the spans, want about 0.6", self)
	}
	if busy := used.busyCores(); busy < 0.85 || busy > float64(used.cores)+0.01 {
		t.Fatalf("%.2f of %d processors busy during the spans, want at least the one spinning", busy, used.cores)
	}
	if per := (cpuSample{}).per(used.cpu, 2); per.RevisitMicros < 280_000 || per.RevisitMicros > 330_000 {
		t.Fatalf("%.0f µs a span, want about 300,000", per.RevisitMicros)
	}
}

// A span's own reads are not in it: a hundred empty spans cost this process
// far less than the reads that bound them, each read of /proc's processes
// about 2 ms; a span that held one of its two reads would cost half.
func TestEmptySpansCostNothing(t *testing.T) {
	if beginSpan().cores == 0 {
		t.Skip("no /proc on this host: nothing to measure with")
	}
	runtime.GC()
	var used usage
	before := selfCPU()
	for range 100 {
		start := beginSpan()
		used = used.plus(start, endSpan())
	}
	reads := selfCPU() - before
	if used.cpu.self > reads/4 {
		t.Fatalf("a hundred empty spans: %.3f s of this process's time, of %.3f s spent reading: the spans hold their reads", used.cpu.self, reads)
	}
}
