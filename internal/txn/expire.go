package txn

// AbortTimedOut aborts every Ongoing transaction older than its timeout,
// bumping the epoch as Kafka does so the producer is fenced, and retries
// the markers of prepared transactions nobody is completing. Start runs it
// every transaction.abort.timed.out.transaction.cleanup.interval.ms; tests
// call it after moving the clock. An ID whose lock is busy is left for the
// next sweep.
func (c *Coordinator) AbortTimedOut() {
	now := c.clock.Now()
	for _, t := range c.snapshot(nil) {
		if !t.mu.TryLock() {
			continue
		}
		switch {
		case t.removed || t.completing:
		case t.st.prepared():
			_ = c.completeLocked(t)
		case t.st.state == stateOngoing && now.Sub(t.st.start) > t.st.timeout:
			c.log.Info("aborting timed out transaction", "transactional_id", t.id,
				"producer_id", t.st.producerID, "producer_epoch", t.st.producerEpoch)
			_ = c.abortLocked(t, true)
		}
		t.mu.Unlock()
	}
}

// RemoveExpired forgets transactional IDs with no transaction running and
// no status update for transactional.id.expiration.ms, writing a tombstone
// for each. Start runs it every
// transaction.remove.expired.transaction.cleanup.interval.ms.
func (c *Coordinator) RemoveExpired() {
	now := c.clock.Now()
	for _, t := range c.snapshot(nil) {
		if !t.mu.TryLock() {
			continue
		}
		if !t.removed && !t.completing && !t.st.running() && t.st.producerID != noProducerID &&
			now.Sub(t.st.lastUpdate) >= c.cfg.TransactionalIDExpiration {
			if err := c.append(t.partition, txnKey(t.id), nil, now); err != nil {
				c.log.Warn("writing transactional id tombstone failed", "transactional_id", t.id, "err", err)
			} else {
				c.log.Info("transactional id expired", "transactional_id", t.id)
				c.removeLocked(t)
			}
		}
		t.mu.Unlock()
	}
}
