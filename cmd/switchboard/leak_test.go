package main

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if goroutines outlive them: servers,
// connectors, --exec commands and NATS connections must all stop. The
// tests read a client config of their own (XDG_CONFIG_HOME in a temporary
// directory), never the one of the user who runs them. The binaries the
// tests run are built once (startBuilds).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "switchboard-test-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	os.Unsetenv("SWITCHBOARD_CONFIG_DIR")
	flag.Parse() // for startBuilds, which reads -run and -short
	waitBuilds, err := startBuilds()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	waitBuilds()
	os.RemoveAll(dir)
	if code == 0 {
		// The test DNS server of package acmetest (one per process)
		// outlives the tests by design.
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/miekg/dns.(*Server).ActivateAndServe")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
