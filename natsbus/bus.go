package natsbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
)

var _ switchboard.Bus = (*Bus)(nil)

// DefaultPrefix is the first token of every subject the bus uses.
const DefaultPrefix = "switchboard"

// Options configures a Bus.
type Options struct {
	// Prefix is the first token of every subject, so that deployments can
	// share a NATS cluster; default DefaultPrefix.
	Prefix string
	// Name names the connection in the server's monitoring; default
	// "switchboard".
	Name string
	// Logger receives connection events; default slog.Default().
	Logger *slog.Logger
	// Extra are more nats.go options (credentials, TLS), applied last.
	Extra []nats.Option
}

// Bus is a switchboard.Bus on a NATS connection it owns.
type Bus struct {
	nc     *nats.Conn
	sub    *nats.Subscription
	prefix string      // with its trailing dot
	local  *membus.Bus // this instance's watchers
	log    *slog.Logger

	received atomic.Uint64 // hints received from other instances
	carried  atomic.Uint64 // Carrier messages received from other instances (carrier.go)
	carrier  carrier       // the Carrier's subscriptions and dispatcher (carrier.go)
}

// Connect connects to the NATS servers at urls (comma-separated nats://
// URLs) and starts the bus. The connection reconnects for as long as the
// bus is open; hints published meanwhile are buffered by the client.
func Connect(urls string, opts Options) (*Bus, error) {
	return start(opts, func(o []nats.Option) (*nats.Conn, error) { return nats.Connect(urls, o...) })
}

// start connects with dial and subscribes to the deployment's subjects.
func start(opts Options, dial func([]nats.Option) (*nats.Conn, error)) (*Bus, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(opts.Prefix, " *>\t\r\n") || strings.HasPrefix(opts.Prefix, ".") || strings.HasSuffix(opts.Prefix, ".") {
		return nil, fmt.Errorf("natsbus: %q is not a subject prefix", opts.Prefix)
	}
	if opts.Name == "" {
		opts.Name = "switchboard"
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	b := &Bus{prefix: opts.Prefix + ".", log: log, local: membus.New()}
	o := []nats.Option{
		nats.Name(opts.Name),
		nats.NoEcho(), // Notify signals this instance's watchers itself
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(250*time.Millisecond, time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats: disconnected; hints wait in the client until it reconnects", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("nats: reconnected", "server", nc.ConnectedUrlRedacted()) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Error("nats", "err", err) }),
	}
	o = append(o, opts.Extra...)
	nc, err := dial(o)
	if err != nil {
		return nil, fmt.Errorf("natsbus: connect: %w", err)
	}
	b.nc = nc
	b.sub, err = nc.Subscribe(b.prefix+">", b.deliver)
	if err == nil {
		// The server has the subscription once the flush returns.
		err = nc.Flush()
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsbus: subscribe to %s>: %w", b.prefix, err)
	}
	// Hints are tiny; a slow instance should merge them, not be cut off.
	_ = b.sub.SetPendingLimits(-1, 64<<20)
	return b, nil
}

// deliver signals the local watchers of a hint from another instance.
func (b *Bus) deliver(m *nats.Msg) {
	b.received.Add(1)
	_ = b.local.Notify(context.Background(), strings.TrimPrefix(m.Subject, b.prefix))
}

// Notify implements switchboard.Bus: it signals this instance's watchers
// and publishes the hint for the others. It does not wait for them.
func (b *Bus) Notify(ctx context.Context, subject string) error {
	if err := b.local.Notify(ctx, subject); err != nil {
		return err
	}
	if err := b.nc.Publish(b.prefix+subject, nil); err != nil {
		if errors.Is(err, nats.ErrConnectionClosed) {
			return switchboard.ErrBusClosed
		}
		return fmt.Errorf("natsbus: publish %s: %w", subject, err)
	}
	return nil
}

// Watch implements switchboard.Bus.
func (b *Bus) Watch(ctx context.Context, subject string) (switchboard.Watch, error) {
	return b.local.Watch(ctx, subject)
}

// WatchFunc implements switchboard.Bus.
func (b *Bus) WatchFunc(ctx context.Context, subject string, notify func(closed bool)) (switchboard.Watch, error) {
	return b.local.WatchFunc(ctx, subject, notify)
}

// Close implements switchboard.Bus: it closes every watch and the
// connection, after sending the hints still buffered.
func (b *Bus) Close() error {
	if err := b.local.Close(); err != nil {
		return err
	}
	if b.nc.IsClosed() {
		return nil
	}
	_ = b.sub.Unsubscribe()
	err := b.nc.FlushTimeout(time.Second)
	b.nc.Close()
	b.stopCarrier()
	if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrTimeout) {
		err = nil // hints are only hints
	}
	return err
}

// Connected reports whether the bus has a live connection to a server.
func (b *Bus) Connected() bool { return b.nc.IsConnected() }

// Received returns how many hints the bus received from other instances
// since it started (its own are not echoed back).
func (b *Bus) Received() uint64 { return b.received.Load() }
