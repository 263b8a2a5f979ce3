package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// Communities, their members, and the two questions the network asks of
// them: which one agent discovery chooses (one query: Discover), and who
// a directory lists (FindMembers). Both read an agent's reach from its
// session's renewed_at and its session_ends row (connector agents), or
// from its deliveries waiting for a retry (webhook agents): reachSQL.

const communityColumns = `c.name, c.closed, c.created_at, c.updated_at,
	(SELECT COUNT(*) FROM community_members m WHERE m.community = c.name)`

// SaveCommunity implements switchboard.CommunityStore.
func (db *DB) SaveCommunity(ctx context.Context, c *switchboard.Community) (bool, error) {
	var created bool
	err := db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := nanos(db.Now())
		res, err := tx.ExecContext(ctx, `INSERT INTO communities (name, closed, created_at, updated_at) VALUES ($1, $2, $3, $3)
			ON CONFLICT (name) DO NOTHING`, c.Name, boolInt(c.Closed), now)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if created = n == 1; !created {
			if _, err := tx.ExecContext(ctx, `UPDATE communities SET closed = $1, updated_at = $2 WHERE name = $3`,
				boolInt(c.Closed), now, c.Name); err != nil {
				return err
			}
		}
		got, err := scanCommunity(tx.QueryRowContext(ctx, `SELECT `+communityColumns+` FROM communities c WHERE c.name = $1`, c.Name))
		if err != nil {
			return err
		}
		*c = *got
		return nil
	})
	return created, err
}

// FindCommunity implements switchboard.CommunityStore.
func (db *DB) FindCommunity(ctx context.Context, name string) (*switchboard.Community, error) {
	c, err := scanCommunity(db.read.QueryRowContext(ctx, `SELECT `+communityColumns+` FROM communities c WHERE c.name = $1`, name))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "community not found")
	}
	return c, db.formatError(err)
}

// LookupCommunity implements switchboard.CommunityStore.
func (db *DB) LookupCommunity(ctx context.Context, name string) (*switchboard.Community, error) {
	return db.cachedCommunity(ctx, name)
}

// findCommunity reads the community with the name.
func (db *DB) findCommunity(ctx context.Context, name string) (*switchboard.Community, error) {
	var c switchboard.Community
	var closed int
	var created, updated int64
	err := db.read.QueryRowContext(ctx, `SELECT name, closed, created_at, updated_at FROM communities WHERE name = $1`, name).
		Scan(&c.Name, &closed, &created, &updated)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "community not found")
	} else if err != nil {
		return nil, db.formatError(err)
	}
	c.Closed = closed != 0
	c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &c, nil
}

// FindCommunities implements switchboard.CommunityStore.
func (db *DB) FindCommunities(ctx context.Context, accountID string) ([]*switchboard.Community, error) {
	q := `SELECT ` + communityColumns + ` FROM communities c ORDER BY c.name`
	var args []any
	if accountID != "" {
		q = `SELECT ` + communityColumns + ` FROM communities c WHERE c.name IN (SELECT m.community
			FROM agents g JOIN community_members m ON m.agent_id = g.id WHERE g.account_id = $1) ORDER BY c.name`
		args = []any{accountID}
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.Community
	for rows.Next() {
		c, err := scanCommunity(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func scanCommunity(s scanner) (*switchboard.Community, error) {
	var c switchboard.Community
	var closed int
	var created, updated int64
	if err := s.Scan(&c.Name, &closed, &created, &updated, &c.Members); err != nil {
		return nil, err
	}
	c.Closed = closed != 0
	c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &c, nil
}

// JoinCommunity implements switchboard.CommunityStore.
func (db *DB) JoinCommunity(ctx context.Context, agentID, community string, closedOK bool) (bool, error) {
	var joined bool
	err := db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var exists int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM agents WHERE id = $1`+db.forShare(""), agentID).Scan(&exists)
		if err == sql.ErrNoRows {
			return errAgentNotFound
		} else if err != nil {
			return err
		}
		now := nanos(db.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO communities (name, closed, created_at, updated_at) VALUES ($1, 0, $2, $2)
			ON CONFLICT (name) DO NOTHING`, community, now); err != nil {
			return err
		}
		var closed, member, count int
		err = tx.QueryRowContext(ctx, `SELECT c.closed,
			(SELECT COUNT(*) FROM community_members m WHERE m.community = c.name AND m.agent_id = $2),
			(SELECT COUNT(*) FROM community_members m WHERE m.agent_id = $2)
			FROM communities c WHERE c.name = $1`+db.forShare("c"), community, agentID).Scan(&closed, &member, &count)
		switch {
		case err != nil:
			return err
		case member > 0:
			return nil
		case closed != 0 && !closedOK:
			return switchboard.Errorf(switchboard.EFORBIDDEN, "the community %q is closed: only the operator adds agents to it", community)
		case count >= switchboard.MaxCommunitiesPerAgent:
			return switchboard.Errorf(switchboard.EINVALID, "the agent is in %d communities, the most it may be in", count)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO community_members (community, agent_id, joined_at) VALUES ($1, $2, $3)
			ON CONFLICT (community, agent_id) DO NOTHING`, community, agentID, now)
		joined = err == nil
		return err
	})
	return joined, err
}

// LeaveCommunity implements switchboard.CommunityStore.
func (db *DB) LeaveCommunity(ctx context.Context, agentID, community string) error {
	return db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM community_members WHERE community = $1 AND agent_id = $2`, community, agentID)
		if err != nil {
			return err
		}
		if err := changedRow(res, switchboard.Errorf(switchboard.ENOTFOUND, "the agent is not in the community %q", community)); err != nil {
			return err
		}
		return nil
	})
}

// FindAgentCommunities implements switchboard.CommunityStore.
func (db *DB) FindAgentCommunities(ctx context.Context, agentIDs []string) (map[string][]string, error) {
	out := make(map[string][]string)
	for chunk := range slices.Chunk(agentIDs, listChunk) {
		w := &where{}
		rows, err := db.read.QueryContext(ctx, `SELECT agent_id, community FROM community_members
			WHERE agent_id IN (`+placeholders(w, chunk)+`) ORDER BY agent_id, community`, w.args...)
		if err != nil {
			return nil, db.formatError(err)
		}
		for rows.Next() {
			var id, c string
			if err := rows.Scan(&id, &c); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = append(out[id], c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ShareCommunity implements switchboard.CommunityStore.
func (db *DB) ShareCommunity(ctx context.Context, agentA, agentB string) (bool, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM community_members x
		WHERE x.agent_id = $1 AND EXISTS (SELECT 1 FROM community_members y WHERE y.community = x.community AND y.agent_id = $2)`,
		agentA, agentB).Scan(&n)
	return n > 0, db.formatError(err)
}

// reachSQL is an agent's switchboard.Reach (0 live, 1 grace, 2 none),
// from the columns of g (agents) and s (its session, if any), and for a
// connector agent not live, its last session's end (session_ends) or for
// a webhook agent its deliveries waiting for a retry; live, grace and
// ended are the placeholders of the Liveness times. What only some agents
// need is read in a subquery that the CASE reaches for those alone.
func reachSQL(live, grace, ended string) string {
	return `CASE
		WHEN g.mode = 'connector' THEN CASE WHEN s.renewed_at >= ` + live + ` THEN 0
			WHEN s.renewed_at >= ` + grace + ` OR EXISTS (SELECT 1 FROM session_ends e
				WHERE e.agent_id = g.id AND e.ended_at >= ` + ended + `) THEN 1 ELSE 2 END
		WHEN g.mode IN ('webhook', 'front') THEN CASE WHEN EXISTS (SELECT 1 FROM deliveries d
			WHERE d.agent_id = g.id AND d.state = 'queued' AND d.attempts > 0 AND d.last_error <> '') THEN 2 ELSE 0 END
		ELSE 2 END`
}

// wakeableSQL is 1 when the agent g sleeps and can be woken
// (switchboard.Member.Wakeable), else 0: in inbox mode, with a wake
// configuration, and its last finished wake (by wakes_agent) was sent.
const wakeableSQL = `CASE WHEN g.mode = 'inbox' AND EXISTS (SELECT 1 FROM wake_configs wc WHERE wc.agent_id = g.id)
		AND COALESCE((SELECT w.state FROM wakes w WHERE w.agent_id = g.id AND w.state IN ('sent', 'failed', 'dropped')
			ORDER BY w.created_at DESC LIMIT 1), 'sent') = 'sent' THEN 1 ELSE 0 END`

// reachJoins joins what reachSQL reads to the agents g.
const reachJoins = ` LEFT JOIN agent_sessions s ON s.agent_id = g.id`

// reachArgs adds the Liveness times to w and returns reachSQL of them.
func reachArgs(w *where, l switchboard.Liveness) string {
	return reachSQL(w.arg(nanos(l.LiveSince)), w.arg(nanos(l.GraceSince)), w.arg(nanos(l.EndedSince)))
}

// memberCommunities returns the condition on m.community of a discovery
// query: one of its communities, or one of the sender's.
func memberCommunities(w *where, q switchboard.DiscoveryQuery) string {
	if len(q.Communities) == 0 {
		return `m.community IN (SELECT x.community FROM community_members x WHERE x.agent_id = ` + w.arg(q.SenderID) + `)`
	}
	return `m.community IN (` + placeholders(w, q.Communities) + `)`
}

// skillSQL is the condition that the agent whose id is the column col
// offers the skill. Discovery names the member's column, so that the
// planner checks the skill before it reads the agent.
func skillSQL(w *where, col, skill string) string {
	return `EXISTS (SELECT 1 FROM agent_skills k WHERE k.agent_id = ` + col + ` AND k.skill = ` + w.arg(strings.ToLower(strings.TrimSpace(skill))) + `)`
}

// rankedSQL returns the statement of q's candidates that are reachable,
// as rows (id, reach, open_tasks, renewed_at, handle), in two parts: its WITH clause and its
// SELECT. Its plan does not depend on the planner's statistics (on a
// PostgreSQL table not yet analyzed, a plan of joins started from the
// accounts and read every agent): it reads the members of the
// communities by key (community_members' primary key) and, for each, in
// correlated subqueries that each look rows up by key: whether it offers
// the skill, its gates and reach (its agent in agents_gates, its account
// and session: one row each), and for those reachable its count of
// unfinished tasks (peer_usage). The members are materialized before they
// are filtered on their reach, so that reach is read once per member.
//
// For q.Sleepers, the reach of a member is 2 when it can be woken
// (wakeableSQL) and 3 otherwise, and the rows are those of reach 2.
func rankedSQL(w *where, q switchboard.DiscoveryQuery) (with, ranked string) {
	reach, keep := `CASE WHEN `+wakeableSQL+` = 1 THEN 2 ELSE 3 END`, `r.reach = 2`
	if !q.Sleepers {
		reach, keep = reachArgs(w, q.Liveness), `r.reach < 2`
	}
	conds := []string{memberCommunities(w, q)}
	if q.SenderID != "" {
		conds = append(conds, `m.agent_id <> `+w.arg(q.SenderID))
	}
	if q.AgentID != "" {
		conds = append(conds, `m.agent_id = `+w.arg(q.AgentID))
	}
	if q.Skill != "" {
		conds = append(conds, skillSQL(w, "m.agent_id", q.Skill))
	}
	with = `WITH r AS MATERIALIZED (
			SELECT m.agent_id AS id, (SELECT ` + reach + `
				FROM agents g JOIN accounts a ON a.id = g.account_id` + reachJoins + `
				WHERE g.id = m.agent_id AND g.approved = 1 AND g.accepts_tasks = 1 AND a.disabled = 0) AS reach
			FROM community_members m
			WHERE ` + strings.Join(conds, " AND ") + `)`
	ranked = `SELECT r.id, r.reach, (SELECT COALESCE(SUM(u.open_tasks), 0) FROM peer_usage u WHERE u.agent_id = r.id) AS open_tasks,
			(SELECT s.renewed_at FROM agent_sessions s WHERE s.agent_id = r.id) AS renewed_at,
			(SELECT h.handle FROM agents h WHERE h.id = r.id) AS handle
		FROM r WHERE ` + keep
	return with, ranked
}

// Discover implements switchboard.CommunityStore: one statement (see
// rankedSQL) that sorts the candidates by the policy and keeps the
// first. The one chosen is then read whole (its card's JSON is not
// carried through the sort): on SQLite through the identity cache, as a
// request reads an agent by its address.
func (db *DB) Discover(ctx context.Context, q switchboard.DiscoveryQuery) (*switchboard.Candidate, error) {
	if q.AgentID != "" && !q.Sleepers {
		return db.checkCandidate(ctx, q)
	}
	w := &where{}
	with, ranked := rankedSQL(w, q)
	after := w.arg(q.After)
	cols, joins := agentColumns, ` JOIN agents g ON g.id = chosen.id JOIN accounts a ON a.id = g.account_id`
	if db.identities != nil {
		cols, joins = `g.handle`, ` JOIN agents g ON g.id = chosen.id`
	}
	query := with + `
		SELECT ` + cols + `, chosen.reach, chosen.open_tasks FROM (
			SELECT x.id, x.reach, x.open_tasks FROM (` + ranked + `) x
			ORDER BY x.reach, x.open_tasks, CASE WHEN x.id > ` + after + ` THEN 0 ELSE 1 END, x.id LIMIT 1) chosen` + joins
	row := db.read.QueryRowContext(ctx, query, w.args...)
	var cand switchboard.Candidate
	var reachN int
	var g *switchboard.Agent
	var err error
	if db.identities != nil {
		var handle string
		if err = row.Scan(&handle, &reachN, &cand.OpenTasks); err == nil {
			g, err = db.cachedAgent(ctx, handle)
			if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
				return nil, nil // deleted since
			}
		}
	} else if g, err = scanAgentWith(row, &reachN, &cand.OpenTasks); err == nil {
		err = db.openAgent(g)
	}
	if err == sql.ErrNoRows {
		return nil, nil
	} else if err != nil {
		return nil, db.formatError(err)
	}
	cand.Agent, cand.Reach = g, switchboard.Reach(reachN)
	return &cand, nil
}

// checkCandidate is Discover of the one agent q.AgentID (a choice being
// checked): its gates and reach, and its membership with the skill, read
// by key, without the count of its unfinished tasks (which the caller
// keeps) or a sort. OpenTasks is left 0.
func (db *DB) checkCandidate(ctx context.Context, q switchboard.DiscoveryQuery) (*switchboard.Candidate, error) {
	w := &where{}
	reach := reachArgs(w, q.Liveness)
	agent := w.arg(q.AgentID)
	conds := []string{`m.agent_id = ` + agent, memberCommunities(w, q)}
	if q.SenderID != "" {
		conds = append(conds, `m.agent_id <> `+w.arg(q.SenderID))
	}
	if q.Skill != "" {
		conds = append(conds, skillSQL(w, "m.agent_id", q.Skill))
	}
	cols := agentColumns
	if db.identities != nil {
		cols = `g.handle`
	}
	query := `SELECT ` + cols + `, ` + reach + `, 0
		FROM agents g JOIN accounts a ON a.id = g.account_id` + reachJoins + `
		WHERE g.id = ` + agent + ` AND g.approved = 1 AND g.accepts_tasks = 1 AND a.disabled = 0
			AND EXISTS (SELECT 1 FROM community_members m WHERE ` + strings.Join(conds, " AND ") + `)`
	row := db.read.QueryRowContext(ctx, query, w.args...)
	var cand switchboard.Candidate
	var reachN int
	var g *switchboard.Agent
	var err error
	if db.identities != nil {
		var handle string
		if err = row.Scan(&handle, &reachN, &cand.OpenTasks); err == nil && reachN < int(switchboard.ReachNone) {
			g, err = db.cachedAgent(ctx, handle)
			if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
				return nil, nil // deleted since
			}
		}
	} else if g, err = scanAgentWith(row, &reachN, &cand.OpenTasks); err == nil {
		err = db.openAgent(g)
	}
	if err == sql.ErrNoRows || (err == nil && reachN >= int(switchboard.ReachNone)) {
		return nil, nil
	} else if err != nil {
		return nil, db.formatError(err)
	}
	cand.Agent, cand.Reach = g, switchboard.Reach(reachN)
	return &cand, nil
}

// RankCandidates implements switchboard.CommunityStore: the rows of
// rankedSQL, one per agent (a member of two of the communities once).
func (db *DB) RankCandidates(ctx context.Context, q switchboard.DiscoveryQuery) ([]switchboard.Ranked, error) {
	w := &where{}
	with, ranked := rankedSQL(w, q)
	rows, err := db.read.QueryContext(ctx, with+` `+ranked, w.args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []switchboard.Ranked
	seen := make(map[string]bool)
	for rows.Next() {
		var r switchboard.Ranked
		var reachN int
		var renewed sql.NullInt64
		if err := rows.Scan(&r.AgentID, &reachN, &r.OpenTasks, &renewed, &r.Handle); err != nil {
			return nil, db.formatError(err)
		}
		if renewed.Valid {
			r.RenewedAt = fromNanos(renewed.Int64)
		}
		if seen[r.AgentID] {
			continue
		}
		seen[r.AgentID] = true
		r.Reach = switchboard.Reach(reachN)
		out = append(out, r)
	}
	return out, db.formatError(rows.Err())
}

// CountDiscoveryGates implements switchboard.CommunityStore. As Discover,
// it reads the members by key and looks each one up by key, so that its
// plan does not depend on the planner's statistics: each member's level
// is how many of the gates, in Reason's order, it passes (1 a member of
// an enabled account, 2 approved, 3 accepting tasks, 4 offering the skill,
// 5 reachable; none: its account is disabled), and each count is of the
// members at a level or above. A member of two of the communities counts
// once (DISTINCT: its level is the same in both).
func (db *DB) CountDiscoveryGates(ctx context.Context, q switchboard.DiscoveryQuery) (switchboard.DiscoveryGates, error) {
	w := &where{}
	reach := reachArgs(w, q.Liveness)
	conds := []string{memberCommunities(w, q)}
	if q.SenderID != "" {
		conds = append(conds, `m.agent_id <> `+w.arg(q.SenderID))
	}
	skill := `1 = 1`
	if q.Skill != "" {
		skill = skillSQL(w, "g.id", q.Skill)
	}
	// Level 4 is split: -4 for a member that sleeps and can be woken
	// (wakeableSQL), counted as 4 and as Asleep.
	var out switchboard.DiscoveryGates
	err := db.read.QueryRowContext(ctx, `WITH r AS MATERIALIZED (
			SELECT DISTINCT m.agent_id, (SELECT CASE WHEN g.approved <> 1 THEN 1 WHEN g.accepts_tasks <> 1 THEN 2
					WHEN NOT (`+skill+`) THEN 3 WHEN `+reach+` >= 2 THEN (CASE WHEN `+wakeableSQL+` = 1 THEN -4 ELSE 4 END) ELSE 5 END
				FROM agents g JOIN accounts a ON a.id = g.account_id`+reachJoins+`
				WHERE g.id = m.agent_id AND a.disabled = 0) AS level
			FROM community_members m WHERE `+strings.Join(conds, " AND ")+`)
		SELECT COUNT(CASE WHEN ABS(r.level) >= 1 THEN 1 END), COUNT(CASE WHEN ABS(r.level) >= 2 THEN 1 END),
			COUNT(CASE WHEN ABS(r.level) >= 3 THEN 1 END), COUNT(CASE WHEN ABS(r.level) >= 4 THEN 1 END),
			COUNT(CASE WHEN r.level >= 5 THEN 1 END), COUNT(CASE WHEN r.level = -4 THEN 1 END)
		FROM r`, w.args...).
		Scan(&out.Members, &out.Approved, &out.Accepting, &out.Skilled, &out.Reachable, &out.Asleep)
	return out, db.formatError(err)
}

// FindMembers implements switchboard.CommunityStore.
func (db *DB) FindMembers(ctx context.Context, f switchboard.MemberFilter) ([]*switchboard.Member, error) {
	if f.Communities != nil && len(f.Communities) == 0 {
		return nil, nil
	}
	w := &where{}
	reach := reachArgs(w, f.Liveness)
	members := `SELECT m.agent_id FROM community_members m`
	if f.Communities != nil {
		members += ` WHERE m.community IN (` + placeholders(w, f.Communities) + `)`
	}
	conds := []string{`g.id IN (` + members + `)`, `a.disabled = 0`}
	if f.Skill != "" {
		conds = append(conds, skillSQL(w, "g.id", f.Skill))
	}
	if f.ExcludeAgentID != "" {
		conds = append(conds, `g.id <> `+w.arg(f.ExcludeAgentID))
	}
	if f.After != "" {
		conds = append(conds, `g.handle > `+w.arg(f.After))
	}
	if f.OnlyLive {
		conds = append(conds, reach+` = 0`)
	}
	limit := ""
	if f.Limit > 0 {
		limit = ` LIMIT ` + w.arg(f.Limit)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+agentColumns+`, `+reach+`, `+wakeableSQL+`
		FROM agents g JOIN accounts a ON a.id = g.account_id`+reachJoins+`
		WHERE `+strings.Join(conds, " AND ")+` ORDER BY g.handle`+limit, w.args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.Member
	var ids []string
	for rows.Next() {
		var reachN, wakeable int
		g, err := scanAgentWith(rows, &reachN, &wakeable)
		if err != nil {
			return nil, err
		}
		if err := db.openAgent(g); err != nil {
			return nil, err
		}
		out = append(out, &switchboard.Member{Agent: g, Reach: switchboard.Reach(reachN), Wakeable: wakeable == 1})
		ids = append(ids, g.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	all, err := db.FindAgentCommunities(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, m := range out {
		for _, c := range all[m.Agent.ID] {
			if f.Communities == nil || slices.Contains(f.Communities, c) {
				m.Communities = append(m.Communities, c)
			}
		}
	}
	return out, nil
}
