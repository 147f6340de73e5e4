package amqp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/revisit-sched/revisit/broker"
)

// managementTimeout bounds one management API request.
const managementTimeout = 10 * time.Second

// Depth returns the number of messages in queue. Without
// Config.ManagementURL it is a passive declare on a dedicated channel and
// counts ready messages only (not those delivered to workers and not yet
// acknowledged); with it, it is the management API's "messages" (ready +
// unacknowledged, sampled by RabbitMQ every few seconds). Depth does not
// wait for a lost connection: it fails at once with an error wrapping
// broker.ErrDepthUnknown.
func (b *Broker) Depth(ctx context.Context, queue string) (int64, error) {
	q, err := b.Inspect(ctx, queue)
	return q.Messages, err
}

var _ broker.Inspector = (*Broker)(nil)

// Inspect returns the depth of queue, as Depth measures it, and its
// consumers, from the same passive declare or management API request.
func (b *Broker) Inspect(ctx context.Context, queue string) (broker.QueueInfo, error) {
	if err := ctx.Err(); err != nil {
		return broker.QueueInfo{}, fmt.Errorf("depth of %s: %w: %w", queue, broker.ErrDepthUnknown, err)
	}
	if b.cfg.ManagementURL != "" {
		return b.managementInspect(ctx, queue)
	}
	return b.passiveInspect(queue)
}

// passiveInspect measures queue with a passive declare.
func (b *Broker) passiveInspect(queue string) (broker.QueueInfo, error) {
	b.depthMu.Lock()
	defer b.depthMu.Unlock()
	if b.depthCh == nil || b.depthCh.IsClosed() {
		conn, err := b.connectionNow()
		if err != nil {
			return broker.QueueInfo{}, fmt.Errorf("depth of %s: %w: %w", queue, broker.ErrDepthUnknown, err)
		}
		ch, err := conn.Channel()
		if err != nil {
			return broker.QueueInfo{}, fmt.Errorf("depth of %s: %w: open channel: %w", queue, broker.ErrDepthUnknown, err)
		}
		b.depthCh = ch
	}
	q, err := b.depthCh.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		// Any error closes the channel (a missing queue is a channel error).
		_ = b.depthCh.Close()
		b.depthCh = nil
		if amqpCode(err) == amqp091.NotFound {
			return broker.QueueInfo{}, fmt.Errorf("depth of %s: %w", queue, broker.ErrQueueMissing)
		}
		return broker.QueueInfo{}, fmt.Errorf("depth of %s: %w: %w", queue, broker.ErrDepthUnknown, err)
	}
	return broker.QueueInfo{Messages: int64(q.Messages), Consumers: int64(q.Consumers)}, nil
}

// managementInspect reads GET /api/queues/{vhost}/{queue} → messages,
// consumers.
func (b *Broker) managementInspect(ctx context.Context, queue string) (broker.QueueInfo, error) {
	fail := func(format string, args ...any) (broker.QueueInfo, error) {
		return broker.QueueInfo{}, fmt.Errorf("depth of %s: %w: management API: %s", queue, broker.ErrDepthUnknown, fmt.Sprintf(format, args...))
	}
	base, err := url.Parse(b.cfg.ManagementURL)
	if err != nil {
		return fail("url: %v", err)
	}
	user, pass := "guest", "guest"
	if base.User != nil {
		user = base.User.Username()
		pass, _ = base.User.Password()
	} else if uri, err := amqp091.ParseURI(b.cfg.URL); err == nil {
		user, pass = uri.Username, uri.Password
	}
	base.User = nil
	vhost := b.vhost
	if vhost == "" {
		vhost = "/"
	}
	endpoint := strings.TrimSuffix(base.String(), "/") + "/api/queues/" +
		url.PathEscape(vhost) + "/" + url.PathEscape(queue)

	ctx, cancel := context.WithTimeout(ctx, managementTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return fail("request: %v", err)
	}
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fail("%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fail("read: %v", err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return broker.QueueInfo{}, fmt.Errorf("depth of %s: %w", queue, broker.ErrQueueMissing)
	case resp.StatusCode != http.StatusOK:
		return fail("%s", resp.Status)
	}
	var q struct {
		Messages  *int64 `json:"messages"`
		Consumers int64  `json:"consumers"`
	}
	if err := json.Unmarshal(body, &q); err != nil {
		return fail("decode: %v", err)
	}
	if q.Messages == nil {
		// A queue's statistics appear a few seconds after it is created.
		return fail("no \"messages\" sampled yet")
	}
	if *q.Messages < 0 {
		return fail("negative count %d", *q.Messages)
	}
	return broker.QueueInfo{Messages: *q.Messages, Consumers: q.Consumers}, nil
}
