package journal

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
)

// Defaults of a Consumer's configuration.
const (
	// DefaultPrefix is the prefix of the journal's topics.
	DefaultPrefix = "swh.journal.objects"
	// ObjectType is the object type of visit statuses: the topic is
	// PREFIX.origin_visit_status.
	ObjectType = "origin_visit_status"
	// DefaultGroup is revisit's consumer group: not upstream's
	// (swh.scheduler.journal_client), so that both can read the journal
	// side by side without taking each other's partitions.
	DefaultGroup = "revisit.journal_client"
	// DefaultBatchSize is how many statuses a worker writes together.
	DefaultBatchSize = 200
)

// The values of Config.Reset.
const (
	ResetEarliest = "earliest"
	ResetLatest   = "latest"
)

// Store is what a Consumer needs of a store; store.Store satisfies it.
type Store interface {
	feedback.Store
	// ListedOriginsGet returns one page of listed origins; the consumer
	// reads the visit types of the origins of statuses without one.
	ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error)
}

// SCRAM is the SASL SCRAM-SHA-512 login of a Consumer.
type SCRAM struct {
	User, Password string
}

// Config configures a Consumer.
type Config struct {
	// Brokers are the bootstrap brokers, host:port.
	Brokers []string
	// Topic is the topic read; "" is DefaultPrefix.origin_visit_status.
	Topic string
	// Group is the consumer group; "" is DefaultGroup.
	Group string
	// Reset is where a partition without committed offset starts:
	// ResetEarliest ("" too) or ResetLatest.
	Reset string
	// BatchSize is how many statuses one worker writes together, as
	// visit-status ingest's --batch-size; 0 is DefaultBatchSize. A poll
	// takes up to Workers × BatchSize messages, committed together once
	// all are written.
	BatchSize int
	// Workers is how many batches are written at once (each origin's
	// statuses in one); 0 is feedback.DefaultWorkers.
	Workers int
	// MaxMessages, when positive, stops Run after that many messages.
	MaxMessages int
	// SASL, when set, logs in with SCRAM-SHA-512.
	SASL *SCRAM
	// TLS, when set, connects with TLS.
	TLS *tls.Config
	// Horizon bounds the dates of the statuses (results.max_future).
	Horizon feedback.Horizon
	// Rand is the random source of the revisit interval's spread; nil is
	// math/rand/v2.
	Rand func() float64
	// Logger receives what the consumer does; nil discards.
	Logger *slog.Logger
	// Metrics receives the counters; nil counts into unregistered ones.
	Metrics *Metrics
}

// Consumer folds the journal's visit statuses into the visit stats.
type Consumer struct {
	st      Store
	cfg     Config
	client  *kgo.Client
	log     *slog.Logger
	metrics *Metrics

	mu     sync.Mutex
	logged map[string]bool // the malformed kinds and fetch errors logged
	lag    map[int32]int64 // by partition
}

// New checks cfg and creates the consumer's Kafka client, which joins the
// group once Run polls.
func New(st Store, cfg Config) (*Consumer, error) {
	if len(cfg.Brokers) == 0 {
		return nil, revisit.Invalidf("brokers", "missing: name at least one Kafka broker (host:port)")
	}
	if cfg.Topic == "" {
		cfg.Topic = DefaultPrefix + "." + ObjectType
	}
	if cfg.Group == "" {
		cfg.Group = DefaultGroup
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.BatchSize < 0 {
		return nil, revisit.Invalidf("batch_size", "must be positive, not %d", cfg.BatchSize)
	}
	if cfg.Workers == 0 {
		cfg.Workers = feedback.DefaultWorkers
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(nil)
	}
	reset := kgo.NewOffset().AtStart()
	switch cfg.Reset {
	case "", ResetEarliest:
	case ResetLatest:
		reset = kgo.NewOffset().AtEnd()
	default:
		return nil, revisit.Invalidf("auto_offset_reset", "%q is not earliest or latest", cfg.Reset)
	}
	c := &Consumer{st: st, cfg: cfg, log: cfg.Logger, metrics: cfg.Metrics,
		logged: map[string]bool{}, lag: map[int32]int64{}}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.ConsumeResetOffset(reset),
		kgo.DisableAutoCommit(),
		// A batch is processed and committed before its partitions can
		// move to another member.
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(c.forget),
		kgo.OnPartitionsLost(c.forget),
	}
	if cfg.SASL != nil {
		opts = append(opts, kgo.SASL(scram.Auth{User: cfg.SASL.User, Pass: cfg.SASL.Password}.AsSha512Mechanism()))
	}
	if cfg.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg.TLS))
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	c.client = client
	return c, nil
}

// Topic returns the topic the consumer reads.
func (c *Consumer) Topic() string { return c.cfg.Topic }

// Ready reports whether a broker answers.
func (c *Consumer) Ready(ctx context.Context) error {
	if err := c.client.Ping(ctx); err != nil {
		return fmt.Errorf("no Kafka broker of %v answers: %w", c.cfg.Brokers, err)
	}
	return nil
}

// Lag returns, by partition of those this consumer holds, how many
// messages remained after its last batch.
func (c *Consumer) Lag() map[int32]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.lag)
}

// Run consumes until ctx is done (then it commits the batch in flight once
// written, leaves the group and returns nil), until MaxMessages messages
// were processed, or until it cannot go on.
func (c *Consumer) Run(ctx context.Context) error {
	defer c.client.CloseAllowingRebalance()
	c.log.Info("consuming the journal", "topic", c.cfg.Topic, "group", c.cfg.Group, "brokers", c.cfg.Brokers)
	read := 0
	for ctx.Err() == nil {
		n := c.cfg.BatchSize * c.cfg.Workers
		if c.cfg.MaxMessages > 0 {
			if read >= c.cfg.MaxMessages {
				break
			}
			n = min(n, c.cfg.MaxMessages-read)
		}
		fetches := c.client.PollRecords(ctx, n)
		if fetches.IsClientClosed() {
			break
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				c.once("fetch:"+err.Error(), "fetching from the journal failed", "topic", topic, "partition", partition, "err", err)
			}
		})
		records := fetches.Records()
		if len(records) > 0 {
			// The batch is finished even when ctx ends meanwhile: its
			// offsets are committed once it is written.
			c.handle(context.WithoutCancel(ctx), ctx, records)
			c.updateLag(fetches)
			read += len(records)
		}
		c.client.AllowRebalance()
	}
	c.log.Info("stopped consuming the journal", "messages", read)
	return nil
}

// handle processes a batch, retrying while the store fails, and commits
// its offsets; it gives up without committing when stop ends.
func (c *Consumer) handle(ctx, stop context.Context, records []*kgo.Record) {
	statuses := c.decode(ctx, records)
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		err := c.process(ctx, statuses)
		if err == nil {
			break
		}
		c.log.Error("writing a batch of journal statuses failed; retrying", "statuses", len(statuses), "err", err, "retry", wait)
		select {
		case <-stop.Done():
			return
		case <-time.After(wait):
		}
	}
	if err := c.client.CommitRecords(ctx, records...); err != nil {
		// The partitions moved meanwhile: their new owner reads the batch
		// again, and ignores what was already folded.
		c.log.Warn("committing the offsets of a processed batch failed; it will be read again", "err", err)
	}
}

// process folds statuses through the visit-status pipeline and counts the
// outcome.
func (c *Consumer) process(ctx context.Context, statuses []feedback.VisitStatus) error {
	if len(statuses) == 0 {
		return nil
	}
	p := feedback.NewPipeline(ctx, c.st, feedback.PipelineConfig{Workers: c.cfg.Workers, BatchSize: c.cfg.BatchSize,
		Rand: c.cfg.Rand, Horizon: c.cfg.Horizon})
	for _, v := range statuses {
		if err := p.Add(v); err != nil {
			break
		}
	}
	if err := p.Close(); err != nil {
		return err
	}
	_, res := p.Processed()
	c.metrics.count(OutcomeFolded, res.Processed)
	c.metrics.count(OutcomeIgnored, res.Ignored)
	return nil
}

// decode turns records into the final statuses to fold, in date order
// (each origin's in the order of their dates), and counts the others.
func (c *Consumer) decode(ctx context.Context, records []*kgo.Record) []feedback.VisitStatus {
	var (
		msgs     []Message
		from     []*kgo.Record
		notFinal int
		tombs    int
	)
	for _, r := range records {
		if r.Value == nil {
			tombs++
			continue
		}
		m, err := DecodeValue(r.Value)
		if err != nil {
			c.malformed(r, err)
			continue
		}
		if m.Status == feedback.StatusCreated || m.Status == feedback.StatusOngoing {
			notFinal++
			continue
		}
		msgs = append(msgs, m)
		from = append(from, r)
	}
	c.metrics.count(OutcomeTombstone, tombs)
	c.metrics.count(OutcomeIgnored, notFinal)
	types := c.visitTypes(ctx, msgs)
	statuses := make([]feedback.VisitStatus, 0, len(msgs))
	untyped := 0
	for i, m := range msgs {
		vt := m.Type
		if vt == "" {
			if vt = types[m.Origin]; vt == "" {
				untyped++
				continue
			}
		}
		v := m.visitStatus(vt)
		if err := v.Validate(c.cfg.Horizon); err != nil {
			c.malformed(from[i], invalid(err))
			continue
		}
		statuses = append(statuses, v)
	}
	c.metrics.count(OutcomeUntyped, untyped)
	slices.SortStableFunc(statuses, func(a, b feedback.VisitStatus) int { return a.Date.Compare(b.Date) })
	return statuses
}

// visitTypes returns the visit type of each origin of msgs without one
// that is listed with exactly one visit type. A store that cannot say
// leaves them untyped.
func (c *Consumer) visitTypes(ctx context.Context, msgs []Message) map[string]string {
	var urls []string
	for _, m := range msgs {
		if m.Type == "" && !slices.Contains(urls, m.Origin) {
			urls = append(urls, m.Origin)
		}
	}
	if len(urls) == 0 {
		return nil
	}
	seen := map[string]map[string]bool{}
	f := revisit.ListedOriginFilter{URLs: urls, Enabled: revisit.AnyEnabled, Limit: revisit.PageSize.Max}
	for {
		page, err := c.st.ListedOriginsGet(ctx, f)
		if err != nil {
			c.log.Warn("reading the visit types of statuses without one failed; they are skipped", "origins", len(urls), "err", err)
			return nil
		}
		for _, o := range page.Origins {
			if seen[o.URL] == nil {
				seen[o.URL] = map[string]bool{}
			}
			seen[o.URL][o.VisitType] = true
		}
		if page.NextPageToken == "" {
			break
		}
		f.PageToken = page.NextPageToken
	}
	types := map[string]string{}
	for url, vts := range seen {
		if len(vts) == 1 {
			for vt := range vts {
				types[url] = vt
			}
		}
	}
	return types
}

// visitStatus is m as a visit status of visit type vt.
func (m Message) visitStatus(vt string) feedback.VisitStatus {
	return feedback.VisitStatus{Origin: m.Origin, VisitType: vt, Status: m.Status, Date: m.Date, Snapshot: m.Snapshot}
}

// invalid turns a validation error of feedback.VisitStatus into a
// malformed-message error of the kind its field names.
func invalid(err error) error {
	kind := KindShape
	var e *revisit.Error
	if errors.As(err, &e) {
		switch e.Field {
		case "url":
			kind = KindOrigin
		case "visit_type":
			kind = KindType
		case "date":
			kind = KindDate
		case "snapshot":
			kind = KindSnapshot
		case "status":
			kind = KindStatus
		}
	}
	return &MalformedError{Kind: kind, Err: err}
}

// malformed counts a skipped record and logs the first of its kind.
func (c *Consumer) malformed(r *kgo.Record, err error) {
	kind := cmp.Or(KindOf(err), KindShape)
	c.metrics.count(OutcomeMalformed, 1)
	c.metrics.malformed.WithLabelValues(kind).Inc()
	attrs := []any{"kind", kind, "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err}
	if k, kerr := DecodeKey(r.Key); kerr == nil {
		attrs = append(attrs, "origin", k.Origin, "visit", k.Visit)
	}
	c.once("malformed:"+kind, "skipping a malformed journal message (later ones of this kind are only counted)", attrs...)
}

// once logs a warning the first time key is seen.
func (c *Consumer) once(key, msg string, attrs ...any) {
	c.mu.Lock()
	first := !c.logged[key]
	c.logged[key] = true
	c.mu.Unlock()
	if first {
		c.log.Warn(msg, attrs...)
	}
}

// updateLag records, for each partition of fetches, how many messages
// follow the last one processed.
func (c *Consumer) updateLag(fetches kgo.Fetches) {
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		lag := max(p.HighWatermark-p.Records[len(p.Records)-1].Offset-1, 0)
		c.metrics.setLag(p.Topic, p.Partition, lag)
		c.mu.Lock()
		c.lag[p.Partition] = lag
		c.mu.Unlock()
	})
}

// forget drops the lag of the partitions the consumer no longer holds.
func (c *Consumer) forget(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for topic, partitions := range lost {
		for _, p := range partitions {
			delete(c.lag, p)
			c.metrics.forgetLag(topic, p)
		}
	}
}
