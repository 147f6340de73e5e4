// Package browser drives headless Chromium in tests: New starts it, Errors
// collects what a page reports as an error.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium is the path of Debian's Chromium.
const Chromium = "/usr/bin/chromium"

// New starts headless Chromium for the test and returns its chromedp
// context; the browser stops when the test ends. It skips the test when
// Chromium is missing, unless CI is set.
func New(t testing.TB) context.Context {
	t.Helper()
	if _, err := exec.LookPath(Chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Chromium (%s) is missing: apt-get install chromium", Chromium)
		}
		t.Skipf("Chromium (%s) is missing: apt-get install chromium", Chromium)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Chromium), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}

// Errors starts recording the errors of the page of ctx: console.error
// calls, uncaught exceptions and error entries of the browser log (a
// resource that fails to load, a blocked request). The returned function
// stops recording and returns them, one line each. Call it before the
// action whose errors it should see.
func Errors(t testing.TB, ctx context.Context) func() []string {
	t.Helper()
	var (
		mu       sync.Mutex
		problems []string
	)
	lctx, stop := context.WithCancel(ctx)
	// The browser calls the listener before the command that caused the
	// event returns, so an error is recorded by the time the action ends.
	err := chromedp.Listen(lctx, func(ev any) {
		var p string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError {
				return
			}
			p = "console.error:"
			for _, a := range ev.Args {
				p += " " + describe(a)
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			p = fmt.Sprintf("exception %s:%d: %s", d.URL, d.LineNumber+1, d.Text)
			if d.Exception != nil {
				p += " " + describe(d.Exception)
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level != log.EntryLevelError {
				return
			}
			p = fmt.Sprintf("log %s %s: %s", ev.Entry.Source, ev.Entry.URL, ev.Entry.Text)
		default:
			return
		}
		mu.Lock()
		problems = append(problems, p)
		mu.Unlock()
	})
	if err != nil {
		stop()
		t.Fatalf("watching the page's errors: %v", err)
	}
	return func() []string {
		stop()
		mu.Lock()
		defer mu.Unlock()
		return problems
	}
}

// describe is the text of a value the page logged or threw: a string as
// it is, another value as the browser describes it.
func describe(o *runtime.RemoteObject) string {
	var s string
	switch {
	case o.Type == runtime.RemoteObjectTypeString && json.Unmarshal(o.Value, &s) == nil:
		return s
	case o.Description != "":
		return o.Description
	case len(o.Value) > 0:
		return string(o.Value)
	}
	return string(o.Type)
}
