package front

// CardWaiters returns how many callers of c.Get wait for a fetch.
func CardWaiters(c *CardCache) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.entries {
		n += e.waiters
	}
	return n
}
