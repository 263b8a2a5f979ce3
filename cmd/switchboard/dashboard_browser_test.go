package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// browserPage is a tab of a headless Chromium, with what went wrong in it:
// dialogs (an injected alert would open one), uncaught exceptions and
// console errors (a blocked inline script is one: the
// Content-Security-Policy refuses it and says so in the console).
type browserPage struct {
	ctx context.Context

	mu       sync.Mutex
	problems []string // guarded by mu
}

// newBrowserPage starts a headless Chromium for the test, or skips the
// test when there is none, unless SWITCHBOARD_TEST_BROWSER=1 (as .ci/run
// sets), which makes a missing browser a failure.
func newBrowserPage(t *testing.T) *browserPage {
	t.Helper()
	return newBrowserPageWith(t)
}

// newBrowserPageWith is newBrowserPage with more options for the browser
// (a flag that trusts a test's own certificate, say).
func newBrowserPageWith(t *testing.T, more ...chromedp.ExecAllocatorOption) *browserPage {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("SWITCHBOARD_TEST_BROWSER") == "1" {
			t.Fatalf("SWITCHBOARD_TEST_BROWSER=1 but %s is missing: apt-get install -y chromium", chromiumPath)
		}
		t.Skipf("no browser at %s (apt-get install -y chromium; SWITCHBOARD_TEST_BROWSER=1 makes this a failure)", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		chromedp.Flag("window-size", "1280,900"),
	}
	opts = append(opts, more...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	p := &browserPage{ctx: ctx}

	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			p.problem("a dialog opened: " + ev.Message)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				p.problem("console " + string(m.Type) + ": " + m.String())
			}
		}
	}()
	return p
}

func (p *browserPage) problem(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, s)
}

// checkClean fails the test if a dialog opened or the console showed an
// error or an exception.
func (p *browserPage) checkClean(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.problems {
		// The wrong token's page comes with 401, the wrong handle's
		// confirmation with 422, as they should.
		if (strings.Contains(s, "status of 401") || strings.Contains(s, "status of 422")) && !strings.Contains(s, "exception") {
			continue
		}
		t.Errorf("in the browser: %s", s)
	}
}

// expectStatus waits for the browser's report of a response with the
// status, which the test expects (checkClean lets only 401 and 422 pass),
// and takes every such report from what went wrong.
func (p *browserPage) expectStatus(t *testing.T, status int) {
	t.Helper()
	want := fmt.Sprintf("status of %d", status)
	testwait.For(t, "the browser's report of a "+want, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		kept := p.problems[:0]
		found := false
		for _, s := range p.problems {
			if strings.Contains(s, want) && !strings.Contains(s, "exception") {
				found = true
				continue
			}
			kept = append(kept, s)
		}
		p.problems = kept
		return found
	})
}

// do runs actions in the tab, each wait bounded by d.
func (p *browserPage) do(t *testing.T, d time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		dump, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`location.href + "\n" + document.documentElement.outerHTML`))
		if len(dump) > 4000 {
			dump = dump[:4000]
		}
		t.Fatalf("in the browser: %v; the page:\n%s", err, dump)
	}
}

// screenshot saves the page as docs/dashboard/{name}.png style PNG into
// the directory SWITCHBOARD_DASHBOARD_SCREENSHOTS names; without it, it
// does nothing (the committed screenshots change only when asked).
func (p *browserPage) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("SWITCHBOARD_DASHBOARD_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// attr reads an attribute of the first element the CSS selector finds.
func (p *browserPage) attr(t *testing.T, sel, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	if err != nil {
		t.Fatalf("attribute %s of %s: %v", name, sel, err)
	}
	return v.Value
}
