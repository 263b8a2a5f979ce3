package natsbus

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// ServerOptions configures an embedded NATS server.
type ServerOptions struct {
	// Name names the server in a cluster; default a generated one.
	Name string
	// Listen is the host:port NATS clients (other instances, the nats CLI)
	// connect to; "" serves only this process, without a socket (or, in a
	// cluster, on a free loopback port: routing needs a client listener).
	Listen string
	// ClusterListen is the host:port other servers route to; "" joins no
	// cluster.
	ClusterListen string
	// Routes are the nats-route://host:port URLs of the cluster's other
	// servers.
	Routes []string
	// ClusterName names the cluster; default "switchboard".
	ClusterName string
}

// StartServer starts an embedded NATS server (core NATS, no JetStream) and
// waits until it accepts connections. Shut it down with Shutdown and
// WaitForShutdown after closing the buses on it.
func StartServer(o ServerOptions) (*server.Server, error) {
	opts := &server.Options{ServerName: o.Name, NoLog: true, NoSigs: true, MaxPayload: 1 << 20}
	if o.Listen == "" && o.ClusterListen != "" {
		// nats-server starts routing only once its client listener is up:
		// give it one on a free loopback port, which no one else reaches.
		o.Listen = "127.0.0.1:0"
	}
	if o.Listen == "" {
		opts.DontListen = true
	} else {
		host, port, err := splitHostPort(o.Listen)
		if err != nil {
			return nil, fmt.Errorf("natsbus: listen address: %w", err)
		}
		opts.Host, opts.Port = host, anyPort(port)
	}
	if o.ClusterListen != "" {
		host, port, err := splitHostPort(o.ClusterListen)
		if err != nil {
			return nil, fmt.Errorf("natsbus: cluster address: %w", err)
		}
		opts.Cluster.Host, opts.Cluster.Port = host, anyPort(port)
		opts.Cluster.Name = o.ClusterName
		if opts.Cluster.Name == "" {
			opts.Cluster.Name = "switchboard"
		}
	}
	if len(o.Routes) > 0 {
		if o.ClusterListen == "" {
			return nil, errors.New("natsbus: routes need a cluster listen address")
		}
		opts.Routes = server.RoutesFromStr(strings.Join(o.Routes, ","))
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsbus: embedded server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, errors.New("natsbus: the embedded server did not start within 10 s")
	}
	return s, nil
}

// ConnectInProcess starts a bus on an embedded server, connected inside
// the process (no socket).
func ConnectInProcess(s *server.Server, opts Options) (*Bus, error) {
	return start(opts, func(o []nats.Option) (*nats.Conn, error) {
		return nats.Connect("", append(o, nats.InProcessServer(s))...)
	})
}

// splitHostPort parses host:port; port 0 picks a free one.
func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", addr)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

// anyPort maps port 0 ("pick a free one") to the server's own marker for
// it; to nats-server, 0 means its default port.
func anyPort(port int) int {
	if port == 0 {
		return server.RANDOM_PORT
	}
	return port
}
