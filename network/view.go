package network

import (
	"context"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// A discovery decision is taken in memory, from a view of its question's
// candidates that the store ranked (RankCandidates) at most ViewTTL ago,
// and the one it picks is checked against the store with one keyed read
// (Discover of that agent alone) before the work goes to it, unless the
// store's DiscoveryGeneration has not moved since the ranking and the
// pick's session, renewed at RenewedAt, is still live: then nothing that
// could have taken it out of the candidates has committed (on PostgreSQL,
// nothing this instance has heard of: another instance's change counts
// once its notification arrives, as for the identity cache), and the
// check would find what the view holds. A view past
// three quarters of its ViewTTL is ranked again in the background while
// decisions go on from it; past ViewTTL, the next decision waits for its
// ranking. So the
// gates are the store's at the moment of the decision: a paused,
// unapproved, departed or disconnected agent is never chosen from a view,
// and a check that fails drops the view and decides from the store.
// What the view may miss is only an agent that became eligible since it
// was ranked (for at most ViewTTL); when the view holds no one, the
// decision is the store's. The view's counts of unfinished tasks are the
// store's at the ranking, each raised by the tasks this instance has
// given the agent since (not lowered by a check of one agent: the others'
// counts would then stay high, and the one checked would take every turn).

// Bounds of the views.
const (
	// DefaultViewTTL is how long a view of a question's candidates is
	// used before the store ranks them again.
	DefaultViewTTL = 2 * time.Second
	// viewMaxAge is how old a view may be while another decision ranks it
	// again; older, a decision goes to the store.
	viewMaxAge = 5 * time.Second
	// maxViews bounds the questions with a view; past it they are all
	// dropped.
	maxViews = 4096
)

// views holds a view per discovery question.
type views struct {
	mu sync.Mutex
	m  map[string]*view // guarded by mu: question key → view
}

// get returns the view of the question key, new if there is none.
func (vs *views) get(key string) *view {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	v := vs.m[key]
	if v == nil {
		if vs.m == nil || len(vs.m) >= maxViews {
			vs.m = make(map[string]*view)
		}
		v = &view{}
		vs.m[key] = v
	}
	return v
}

// drop forgets every view: what changes the candidates on this instance
// (a join, a leave, an approval) is seen by the next decision.
func (vs *views) drop() {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	clear(vs.m)
}

// view is the ranked candidates of one question.
type view struct {
	mu        sync.Mutex
	at        time.Time // guarded by mu: when the store ranked them; zero: never, or dropped
	ranking   bool      // guarded by mu: a decision is ranking them now
	candidate []switchboard.Ranked
	gen       uint64 // guarded by mu: the store's DiscoveryGeneration before the ranking
	genOK     bool   // guarded by mu: the store could tell gen
}

// use says what a decision at now does with the view: pick from it
// (ok), after ranking its candidates again (rank), or while they are
// ranked again in the background (ahead: a view past three quarters of
// its ttl, so that a question asked often never waits for a ranking). A decision
// told to rank calls ranked or failed.
func (v *view) use(now time.Time, ttl time.Duration) (ok, rank, ahead bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	age := now.Sub(v.at)
	fresh := !v.at.IsZero() && age < ttl
	switch {
	case v.ranking:
		return fresh || (!v.at.IsZero() && age < viewMaxAge), false, false
	case fresh && age < ttl*3/4:
		return true, false, false
	}
	v.ranking = true
	return fresh, !fresh, fresh
}

// ranked replaces the candidates with those the store ranked at at, in
// its generation gen (genOK: known).
func (v *view) ranked(c []switchboard.Ranked, at time.Time, gen uint64, genOK bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.candidate, v.at, v.ranking, v.gen, v.genOK = c, at, false, gen, genOK
}

// failed ends a ranking that did not complete.
func (v *view) failed() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ranking = false
}

// forget drops the view's candidates: the next decision ranks them again.
func (v *view) forget() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.candidate, v.at, v.genOK = nil, time.Time{}, false
}

// pick returns the candidate the policy chooses, not the sender: the best
// reach, then the fewest unfinished tasks, then the first id after the
// cursor, wrapping around. It counts the task it will be given. ok is
// false when the view holds no one. current reports whether the view was
// ranked in generation gen.
func (v *view) pick(sender, after string, gen uint64) (r switchboard.Ranked, ok, current bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	best := -1
	for i, c := range v.candidate {
		if c.AgentID == sender {
			continue
		}
		if best < 0 || ranksBefore(c, v.candidate[best], after) {
			best = i
		}
	}
	if best < 0 {
		return switchboard.Ranked{}, false, false
	}
	v.candidate[best].OpenTasks++
	return v.candidate[best], true, v.genOK && v.gen == gen
}

// ranksBefore reports whether a comes before b in the policy's order,
// as the store's Discover sorts them.
func ranksBefore(a, b switchboard.Ranked, after string) bool {
	if a.Reach != b.Reach {
		return a.Reach < b.Reach
	}
	if a.OpenTasks != b.OpenTasks {
		return a.OpenTasks < b.OpenTasks
	}
	if aa, ba := a.AgentID > after, b.AgentID > after; aa != ba {
		return aa
	}
	return a.AgentID < b.AgentID
}

// fromView decides q from its view, ranking the candidates again when
// the view is stale. It returns nil and no error when the view cannot
// decide (it holds no one, or its pick failed the check): the caller
// then asks the store.
func (s *Service) fromView(ctx context.Context, key string, q switchboard.DiscoveryQuery, now time.Time) (*switchboard.Candidate, error) {
	ttl := s.ViewTTL
	if ttl <= 0 {
		return nil, nil
	}
	v := s.views.get(key)
	ok, rank, ahead := v.use(now, ttl)
	rq := q
	rq.After = ""
	if len(rq.Communities) > 0 {
		rq.SenderID = "" // the view serves every sender; pick leaves the sender out
	}
	switch {
	case rank:
		if err := s.rank(ctx, v, rq, now); err != nil {
			return nil, err
		}
		ok = true
	case ahead:
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), viewMaxAge)
			defer cancel()
			_ = s.rank(ctx, v, rq, now) // a failure leaves the view as it was
		}()
	}
	if !ok {
		return nil, nil
	}
	gen, genOK := s.store.DiscoveryGeneration()
	r, found, current := v.pick(q.SenderID, q.After, gen)
	if !found {
		return nil, nil
	}
	if genOK && current {
		if c := s.unchanged(ctx, r, q.Liveness); c != nil {
			return c, nil
		}
	}
	cq := q
	cq.AgentID = r.AgentID
	c, err := s.store.Discover(ctx, cq)
	if err != nil {
		return nil, err
	}
	if c == nil || c.Reach != r.Reach {
		v.forget()
		return nil, nil
	}
	return c, nil
}

// unchanged returns the pick r of a view ranked in the store's current
// generation as the candidate, when its reach has not run out by time
// alone: live, and a connector agent's session renewed since
// l.LiveSince. The agent is read by handle through the store's identity
// cache, and its gates are looked at again (they cannot have changed in
// the generation). Otherwise it returns nil: the pick is to be checked.
func (s *Service) unchanged(ctx context.Context, r switchboard.Ranked, l switchboard.Liveness) *switchboard.Candidate {
	if r.Reach != switchboard.ReachLive || (!r.RenewedAt.IsZero() && r.RenewedAt.Before(l.LiveSince)) {
		return nil
	}
	g, err := s.store.FindAgentByHandle(ctx, r.Handle)
	if err != nil || g.ID != r.AgentID || !g.Approved || !g.AcceptsTasks || g.AccountDisabled {
		return nil
	}
	if g.Mode == switchboard.ModeConnector && r.RenewedAt.IsZero() {
		return nil
	}
	return &switchboard.Candidate{Agent: g, Reach: r.Reach}
}

// rank has the store rank the view's candidates, as of now. The
// generation is read before the ranking, so that a change committed while
// it reads moves the generation past the view's.
func (s *Service) rank(ctx context.Context, v *view, q switchboard.DiscoveryQuery, now time.Time) error {
	gen, genOK := s.store.DiscoveryGeneration()
	c, err := s.store.RankCandidates(ctx, q)
	if err != nil {
		v.failed()
		return err
	}
	v.ranked(c, now, gen, genOK)
	return nil
}
