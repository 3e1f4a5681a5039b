package share

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/scripttest"
)

// TestScripts runs the walkthroughs of testdata/*.txt against a Partition.
// Commands (times are durations after a fixed epoch, at=0s by default):
//
//	new [start=N] [limit=N] [lock=D] [inflight=N]   input: FIRST-LAST STATE COUNT (persisted batches)
//	acquire MEMBER [max=N] [at=D]                   input: FIRST-LAST [skip] (log batches)
//	ack MEMBER [at=D]                               input: FIRST-LAST TYPE[,TYPE...]
//	release MEMBER
//	expire [at=D]
//	advance OFFSET
//	reset OFFSET
//	restore                                         New(config, Snapshot())
//	config [limit=N] [lock=D] [inflight=N]
//
// Each prints its result, then the partition: offsets, then one line per run.
func TestScripts(t *testing.T) {
	scripttest.Run(t, "testdata/*.txt", func(t *testing.T) func(c *scripttest.Case) []string {
		var p *Partition
		return func(c *scripttest.Case) []string {
			f := strings.Fields(c.Command)
			args := scripttest.ParseArgs(f[1:])
			out, err := runScriptCommand(&p, f[0], args, c.Input)
			if err != nil {
				return []string{"error: " + err.Error()}
			}
			return append(out, describe(p)...)
		}
	})
}

func runScriptCommand(pp **Partition, cmd string, args scripttest.Args, input []string) ([]string, error) {
	at, err := scriptDuration(args.Opts["at"], 0)
	if err != nil {
		return nil, err
	}
	now := t0.Add(at)
	member := ""
	if len(args.Pos) > 0 {
		member = args.Pos[0]
	}
	if cmd != "new" && *pp == nil {
		return nil, fmt.Errorf("no partition: start with new")
	}
	p := *pp
	switch cmd {
	case "new":
		cfg, err := scriptConfig(Config{LockDuration: 30 * time.Second, DeliveryCountLimit: 5, MaxInFlight: 2000}, args)
		if err != nil {
			return nil, err
		}
		start, _ := strconv.ParseInt(args.Opts["start"], 10, 64)
		st := State{StartOffset: start}
		for _, l := range input {
			var b StateBatch
			var state string
			if _, err := fmt.Sscanf(l, "%d-%d %s %d", &b.FirstOffset, &b.LastOffset, &state, &b.DeliveryCount); err != nil {
				return nil, fmt.Errorf("batch %q: %v", l, err)
			}
			if b.DeliveryState, err = scriptState(state); err != nil {
				return nil, err
			}
			st.Batches = append(st.Batches, b)
		}
		*pp = New(cfg, st)
		return nil, nil
	case "acquire":
		maxRecords := 500
		if v, ok := args.Opts["max"]; ok {
			if maxRecords, err = strconv.Atoi(v); err != nil {
				return nil, err
			}
		}
		var batches []LogBatch
		for _, l := range input {
			var b LogBatch
			if _, err := fmt.Sscanf(l, "%d-%d", &b.FirstOffset, &b.LastOffset); err != nil {
				return nil, fmt.Errorf("batch %q: %v", l, err)
			}
			b.Skip = strings.HasSuffix(l, " skip")
			batches = append(batches, b)
		}
		got := p.Acquire(member, batches, maxRecords, now)
		out := []string{"acquired:"}
		for _, a := range got {
			out[0] += fmt.Sprintf(" %d-%d(count %d)", a.FirstOffset, a.LastOffset, a.DeliveryCount)
		}
		if len(got) == 0 {
			out[0] += " none"
		}
		return out, nil
	case "ack":
		var ranges []AckRange
		for _, l := range input {
			var r AckRange
			var types string
			if _, err := fmt.Sscanf(l, "%d-%d %s", &r.FirstOffset, &r.LastOffset, &types); err != nil {
				return nil, fmt.Errorf("ack %q: %v", l, err)
			}
			for _, name := range strings.Split(types, ",") {
				t, err := scriptAckType(name)
				if err != nil {
					return nil, err
				}
				r.Types = append(r.Types, t)
			}
			ranges = append(ranges, r)
		}
		errs, changed := p.Acknowledge(member, ranges, now)
		var out []string
		for i, err := range errs {
			res := "ok"
			if err != nil {
				res = err.Error()
			}
			out = append(out, fmt.Sprintf("%s: %s", input[i], res))
		}
		return append(out, fmt.Sprintf("changed: %v", changed)), nil
	case "release":
		return []string{fmt.Sprintf("changed: %v", p.ReleaseMember(member))}, nil
	case "expire":
		return []string{fmt.Sprintf("released: %d", p.ExpireLocks(now))}, nil
	case "advance", "reset":
		offset, err := strconv.ParseInt(member, 10, 64)
		if err != nil {
			return nil, err
		}
		if cmd == "advance" {
			p.AdvanceStart(offset)
		} else {
			p.Reset(offset)
		}
		return nil, nil
	case "restore":
		*pp = New(p.Config(), p.Snapshot())
		return nil, nil
	case "config":
		cfg, err := scriptConfig(p.Config(), args)
		if err != nil {
			return nil, err
		}
		p.SetConfig(cfg)
		return nil, nil
	}
	return nil, fmt.Errorf("unknown command %q", cmd)
}

func scriptConfig(cfg Config, args scripttest.Args) (Config, error) {
	var err error
	if cfg.LockDuration, err = scriptDuration(args.Opts["lock"], cfg.LockDuration); err != nil {
		return cfg, err
	}
	if v, ok := args.Opts["limit"]; ok {
		n, err := strconv.ParseInt(v, 10, 16)
		if err != nil {
			return cfg, err
		}
		cfg.DeliveryCountLimit = int16(n)
	}
	if v, ok := args.Opts["inflight"]; ok {
		if cfg.MaxInFlight, err = strconv.ParseInt(v, 10, 64); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

func scriptDuration(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	return time.ParseDuration(s)
}

func scriptState(s string) (RecordState, error) {
	for _, st := range []RecordState{Available, Acquired, Acknowledged, Archived} {
		if st.String() == s {
			return st, nil
		}
	}
	return 0, fmt.Errorf("unknown state %q", s)
}

var ackTypeNames = map[string]AckType{"gap": AckGap, "accept": AckAccept, "release": AckRelease, "reject": AckReject, "renew": AckRenew}

func scriptAckType(s string) (AckType, error) {
	if t, ok := ackTypeNames[s]; ok {
		return t, nil
	}
	n, err := strconv.Atoi(s) // a raw number, for unknown types
	return AckType(n), err
}

// describe prints the partition: its offsets and stats, then every run.
func describe(p *Partition) []string {
	s := p.Stats()
	out := []string{fmt.Sprintf("start=%d end=%d next=%d can-acquire=%v available=%d acquired=%d acknowledged=%d archived=%d",
		p.StartOffset(), p.EndOffset(), p.NextFetchOffset(), p.CanAcquire(), s.Available, s.Acquired, s.Acknowledged, s.Archived)}
	for _, r := range p.runs {
		line := fmt.Sprintf("  %d-%d %s count=%d", r.first, r.last, r.state, r.count)
		if r.state == Acquired {
			line += fmt.Sprintf(" member=%s until=%s", r.member, time.Unix(0, r.deadline).Sub(t0))
		}
		out = append(out, line)
	}
	return out
}
