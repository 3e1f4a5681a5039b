package main

import (
	"time"
)

// sampler reads a process's RSS every 100 ms.
type sampler struct {
	pid  int
	done chan struct{}
	res  chan [2]int64 // peak, mean
}

func startSampler(pid int) *sampler {
	s := &sampler{pid: pid, done: make(chan struct{}), res: make(chan [2]int64, 1)}
	go s.loop()
	return s
}

func (s *sampler) loop() {
	var sum, n, hwm int64
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		rss, h, err := memory(s.pid)
		if err == nil {
			sum, n, hwm = sum+rss, n+1, h
		}
		select {
		case <-s.done:
			mean := int64(0)
			if n > 0 {
				mean = sum / n
			}
			s.res <- [2]int64{hwm, mean}
			return
		case <-tick.C:
		}
	}
}

func (s *sampler) stop() (peak, mean int64) {
	close(s.done)
	r := <-s.res
	return r[0], r[1]
}
