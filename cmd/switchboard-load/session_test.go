package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/pgtest"
)

// TestSessionScenario runs -scenario session briefly: on one instance
// (SQLite), and with the two ends on two instances (PostgreSQL and NATS)
// when PostgreSQL is there.
func TestSessionScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and agents")
	}
	bin := buildServer(t)
	tests := map[string]config{
		"OneInstance": {agents: 4, rate: 0, instances: 1},
		"OpenLoop":    {agents: 2, rate: 200, instances: 1},
	}
	if pg := os.Getenv(pgtest.EnvVar); pg != "" {
		tests["AcrossInstances"] = config{agents: 2, rate: 200, instances: 2, database: pg}
	} else {
		t.Logf("%s is not set: the scenario across instances (PostgreSQL) is not run", pgtest.EnvVar)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := tc
			cfg.scenario, cfg.peers, cfg.duration, cfg.count, cfg.payload = "session", 1, 20*time.Second, 300, 100
			cfg.switchboard, cfg.agentsPerProc, cfg.connectRate = bin, 100, 4
			if err := cfg.check(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := run(ctx, &cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			res.printTable(&out)
			if err := res.printJSON(&out); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + out.String())
			if res.Frames != int64(cfg.count) || res.Errors != 0 {
				t.Errorf("frames %d errors %d (%s), want %d and 0", res.Frames, res.Errors, res.FirstError, cfg.count)
			}
			if res.P50Ms <= 0 || res.P99Ms < res.P50Ms || res.FramesPerS <= 0 || !strings.Contains(out.String(), `"frames_per_s":`) {
				t.Errorf("implausible figures: %+v", res)
			}
		})
	}
}
