package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// newBrowser starts Debian's Chromium headless with the flags this machine needs (no
// sandbox as root, no background networking on a closed network, a fresh profile).
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("Chromium is needed for browser tests: apt-get install -y chromium")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	// Generous: browser tests run in parallel with the scheduling tests and their control
	// plane on two cores; a stuck page still fails well inside the go test timeout.
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// screenshot saves the page as an artifact. It is evidence for people, not an assertion: a
// page caught mid-navigation (Chromium refuses a 0-wide capture) is retried, then only logged.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	var err error
	// Quick refusals are retried for a few seconds. Each attempt has its own deadline:
	// Chromium waits for a frame that a page stuck mid-navigation never draws, and evidence
	// must not use up the test's own time.
	poll.Within(5*time.Second, func() bool {
		attemptCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		png, err = chromedp.Run(attemptCtx, chromedp.FullScreenshot(100))
		return err == nil
	})
	if err != nil {
		t.Logf("screenshot %s not taken: %v", name, err)
		return
	}
	path := filepath.Join(artifactDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
	}
}

// changeSelect picks an option of a select as a person would, firing the change event htmx
// listens for.
func changeSelect(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => {
		const el = document.querySelector(` + jsString(sel) + `);
		el.value = ` + jsString(value) + `;
		el.dispatchEvent(new Event('change', {bubbles: true}));
	})()`)
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// htmxIdle waits until htmx has loaded and wired up the page, has no request in flight and has
// settled what it swapped in, so the next event reaches elements htmx listens on.
func htmxIdle() chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](`document.readyState === 'complete' && typeof htmx !== 'undefined' &&
		document.querySelectorAll('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added').length === 0`)
}
