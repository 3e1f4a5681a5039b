package model

import "testing"

// FuzzParseTopicPartition: a directory name that parses as a partition is
// the name of that partition's directory, so a stray name is never taken
// for another partition's.
func FuzzParseTopicPartition(f *testing.F) {
	for _, s := range []string{"t-0", "my-topic-12", "-1", "t-", "t-2147483647", "t--1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := ParseTopicPartition(s)
		if err != nil {
			return
		}
		if tp.Partition < 0 || tp.Topic == "" {
			t.Fatalf("%q parses as %+v", s, tp)
		}
		if tp.String() != s {
			t.Fatalf("%q parses as %s", s, tp)
		}
	})
}
