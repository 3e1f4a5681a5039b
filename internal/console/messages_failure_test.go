package console

import (
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// TestMessagesBrokerStopsMidRead: when the broker stops answering after
// the end offsets were listed, a page's read ends at its time bound with
// what it has and says so, instead of hanging the request.
func TestMessagesBrokerStopsMidRead(t *testing.T) {
	addr, serve := devcluster.StartTestBroker(t)
	tc := startConsoleOn(t, addr, Config{PageSize: 5})
	msgsFill(t, tc, "m3", 3, 10)
	defer func(d time.Duration) { msgsReadTime = d }(msgsReadTime)
	msgsReadTime = time.Second

	r := httptest.NewRequest("GET", "/topics/m3/messages", nil)
	r.SetPathValue("name", "m3")
	r = r.WithContext(withSession(ctx(t), tc.c.sessions.shared))
	q, err := msgsParseQuery(r, 5)
	if err != nil {
		t.Fatal(err)
	}
	o, err := tc.c.msgsListOffsets(ctx(t), r, "m3", false)
	if err != nil {
		t.Fatal(err)
	}
	parts, _ := msgsPartitions(q, o)
	cursors, backward, err := tc.c.msgsCursors(r, q, o, parts, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer serve.Cmd.Process.Signal(syscall.SIGCONT)
	start := time.Now()
	pg, err := tc.c.msgsReadPage(ctx(t), r, q, cursors, backward, 5, msgsReadTime)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the read took %s with the broker stopped; its bound is %s", d, msgsReadTime)
	}
	if !pg.TimedOut && pg.ReadErr == nil {
		t.Fatalf("a read from a stopped broker reports neither a timeout nor an error: %+v", pg)
	}
}
