package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

const agentColumns = `g.id, g.account_id, g.handle, g.name, g.description, g.mode, g.version,
	g.skills, g.extended_skills, g.accepts_tasks, g.approved, g.pairing, g.endpoint, g.webhook_secret, g.created_at, g.updated_at, g.mcp_off, COALESCE(g.domain, ''), a.disabled`

const agentFrom = ` FROM agents g JOIN accounts a ON a.id = g.account_id`

// CreateAgent implements switchboard.AgentStore.
func (db *DB) CreateAgent(ctx context.Context, g *switchboard.Agent) error {
	now := db.Now().UTC()
	g.CreatedAt, g.UpdatedAt = now, now
	if g.Pairing == "" {
		g.Pairing = switchboard.PairingHuman
	}
	skills, ext, err := marshalSkills(g)
	if err != nil {
		return err
	}
	secret, err := db.seal(purposeWebhookSecret, g.WebhookSecret)
	if err != nil {
		return err
	}
	return db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.checkDomainFree(ctx, tx, g.ID, g.Domain); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO agents (id, account_id, handle, name, description, mode, version,
			skills, extended_skills, accepts_tasks, approved, endpoint, webhook_secret, created_at, updated_at, pairing, mcp_off, domain)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
			g.ID, g.AccountID, g.Handle, g.Name, g.Description, string(g.Mode), g.Version,
			skills, ext, boolInt(g.AcceptsTasks), boolInt(g.Approved), g.Endpoint, secret, nanos(now), nanos(now), string(g.Pairing), boolInt(g.MCPOff),
			nullString(g.Domain))
		if db.dialect.uniqueViolation(err) {
			if violatesDomain(err) {
				return domainTaken(g.Domain)
			}
			return switchboard.Errorf(switchboard.ECONFLICT, "the handle %q is taken", g.Handle)
		} else if err != nil {
			return err
		}
		return db.writeSkillKeys(ctx, tx, g.ID, g.Skills)
	})
}

// FindAgentByID implements switchboard.AgentStore.
func (db *DB) FindAgentByID(ctx context.Context, id string) (*switchboard.Agent, error) {
	return db.findAgent(ctx, db.read, `g.id = $1`, id)
}

// FindAgentByHandle implements switchboard.AgentStore.
func (db *DB) FindAgentByHandle(ctx context.Context, handle string) (*switchboard.Agent, error) {
	return db.cachedAgent(ctx, handle)
}

// FindAgentByDomain implements switchboard.AgentStore.
func (db *DB) FindAgentByDomain(ctx context.Context, domain string) (*switchboard.Agent, error) {
	if domain == "" {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	}
	return db.cachedAgentByDomain(ctx, domain)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (db *DB) findAgent(ctx context.Context, q queryer, cond string, arg any) (*switchboard.Agent, error) {
	return db.findAgentLocked(ctx, q, cond, arg, "")
}

// findAgentLocked is findAgent with a lock suffix (forUpdate("g")).
func (db *DB) findAgentLocked(ctx context.Context, q queryer, cond string, arg any, lock string) (*switchboard.Agent, error) {
	g, err := scanAgent(q.QueryRowContext(ctx, `SELECT `+agentColumns+agentFrom+` WHERE `+cond+lock, arg))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	} else if err != nil {
		return nil, db.formatError(err)
	}
	return g, db.openAgent(g)
}

// FindAgents implements switchboard.AgentStore.
func (db *DB) FindAgents(ctx context.Context, f switchboard.AgentFilter) ([]*switchboard.Agent, error) {
	w := &where{}
	if f.AccountID != nil {
		w.add("g.account_id = ?", *f.AccountID)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+agentColumns+agentFrom+w.String()+` ORDER BY g.handle`, w.args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.Agent
	for rows.Next() {
		g, err := scanAgent(rows)
		if err != nil {
			return nil, err
		}
		if err := db.openAgent(g); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// UpdateAgent implements switchboard.AgentStore.
func (db *DB) UpdateAgent(ctx context.Context, id string, upd switchboard.AgentUpdate) (*switchboard.Agent, error) {
	var out *switchboard.Agent
	err := db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		g, err := db.findAgentLocked(ctx, tx, `g.id = $1`, id, db.forUpdate("g"))
		if err != nil {
			return err
		}
		was := g.Mode
		skillsChange := upd.Skills != nil
		if err := db.checkDomainUpdate(ctx, tx, g, upd); err != nil {
			return err
		}
		applyAgentUpdate(g, upd)
		g.UpdatedAt = db.Now().UTC()
		skills, ext, err := marshalSkills(g)
		if err != nil {
			return err
		}
		secret, err := db.seal(purposeWebhookSecret, g.WebhookSecret)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE agents SET name = $1, description = $2, mode = $3, version = $4,
			skills = $5, extended_skills = $6, accepts_tasks = $7, approved = $8, endpoint = $9, webhook_secret = $10,
			updated_at = $11, pairing = $13, mcp_off = $14, domain = $15 WHERE id = $12`,
			g.Name, g.Description, string(g.Mode), g.Version, skills, ext, boolInt(g.AcceptsTasks), boolInt(g.Approved),
			g.Endpoint, secret, nanos(g.UpdatedAt), g.ID, string(g.Pairing), boolInt(g.MCPOff), nullString(g.Domain))
		if db.dialect.uniqueViolation(err) && violatesDomain(err) {
			return domainTaken(g.Domain)
		} else if err != nil {
			return err
		}
		if skillsChange {
			if _, err := tx.ExecContext(ctx, `DELETE FROM agent_skills WHERE agent_id = $1`, g.ID); err != nil {
				return err
			}
			if err := db.writeSkillKeys(ctx, tx, g.ID, g.Skills); err != nil {
				return err
			}
		}
		if g.Mode != was {
			// Its live deliveries go to the dispatcher of its new mode.
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET mode = $1 WHERE agent_id = $2 AND state IN ('queued', 'offered')`,
				string(g.Mode), g.ID); err != nil {
				return err
			}
		}
		out = g
		return nil
	})
	return out, err
}

func applyAgentUpdate(g *switchboard.Agent, upd switchboard.AgentUpdate) {
	if upd.Name != nil {
		g.Name = *upd.Name
	}
	if upd.Description != nil {
		g.Description = *upd.Description
	}
	if upd.Mode != nil {
		g.Mode = *upd.Mode
	}
	if upd.Version != nil {
		g.Version = *upd.Version
	}
	if upd.Skills != nil {
		g.Skills = *upd.Skills
	}
	if upd.ExtendedSkills != nil {
		g.ExtendedSkills = *upd.ExtendedSkills
	}
	if upd.AcceptsTasks != nil {
		g.AcceptsTasks = *upd.AcceptsTasks
	}
	if upd.Approved != nil {
		g.Approved = *upd.Approved
	}
	if upd.Pairing != nil {
		g.Pairing = *upd.Pairing
	}
	if upd.MCPOff != nil {
		g.MCPOff = *upd.MCPOff
	}
	if upd.Endpoint != nil {
		g.Endpoint = *upd.Endpoint
	}
	if upd.WebhookSecret != nil {
		g.WebhookSecret = *upd.WebhookSecret
	}
	if upd.Domain != nil {
		g.Domain = *upd.Domain
	}
}

// DeleteAgent implements switchboard.AgentStore.
func (db *DB) DeleteAgent(ctx context.Context, id string) error {
	return db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM agents WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if err := changedRow(res, switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")); err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM task_events WHERE task_id IN (SELECT id FROM tasks WHERE agent_id = $1)`,
			`DELETE FROM push_configs WHERE task_id IN (SELECT id FROM tasks WHERE agent_id = $1)`,
			`DELETE FROM push_attempts WHERE task_id IN (SELECT id FROM tasks WHERE agent_id = $1)`,
			`DELETE FROM push_deliveries WHERE task_id IN (SELECT id FROM tasks WHERE agent_id = $1)`,
			`DELETE FROM task_messages WHERE agent_id = $1`,
			`DELETE FROM tasks WHERE agent_id = $1`,
			`DELETE FROM tokens WHERE agent_id = $1`,
			`DELETE FROM deliveries WHERE agent_id = $1`,
			`DELETE FROM agent_sessions WHERE agent_id = $1`,
			`DELETE FROM outbound WHERE agent_id = $1`,
			`DELETE FROM wake_tasks WHERE wake_id IN (SELECT id FROM wakes WHERE agent_id = $1)`,
			`DELETE FROM wakes WHERE agent_id = $1`,
			`DELETE FROM wake_configs WHERE agent_id = $1`,
			`DELETE FROM wake_budget WHERE agent_id = $1`,
			`DELETE FROM peer_usage WHERE agent_id = $1`,
			`DELETE FROM community_members WHERE agent_id = $1`,
			`DELETE FROM agent_skills WHERE agent_id = $1`,
			`DELETE FROM session_ends WHERE agent_id = $1`,
			`DELETE FROM pairings WHERE agent_id = $1`,
			`DELETE FROM pairing_counts WHERE agent_id = $1`,
			`DELETE FROM oauth_codes WHERE agent_id = $1`,
			`DELETE FROM oauth_grants WHERE agent_id = $1`,
			`DELETE FROM fronts WHERE agent_id = $1`,
			`DELETE FROM front_tasks WHERE agent_id = $1`,
			`DELETE FROM front_contexts WHERE agent_id = $1`,
			`DELETE FROM published_cards WHERE agent_id = $1`,
			`DELETE FROM outbound_peers WHERE agent_id = $1`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
}

func marshalSkills(g *switchboard.Agent) (skills, ext string, err error) {
	s, err := json.Marshal(nonNilSkills(g.Skills))
	if err != nil {
		return "", "", fmt.Errorf("encode skills: %w", err)
	}
	e, err := json.Marshal(nonNilSkills(g.ExtendedSkills))
	if err != nil {
		return "", "", fmt.Errorf("encode extended skills: %w", err)
	}
	return string(s), string(e), nil
}

func nonNilSkills(s []a2a.AgentSkill) []a2a.AgentSkill {
	if s == nil {
		return []a2a.AgentSkill{}
	}
	return s
}

func scanAgent(s scanner) (*switchboard.Agent, error) { return scanAgentWith(s) }

// scanAgentWith is scanAgent for a row whose columns after the agent's are
// scanned into extra.
func scanAgentWith(s scanner, extra ...any) (*switchboard.Agent, error) {
	var g switchboard.Agent
	var mode, skills, ext, pairing string
	var accepts, approved, mcpOff, disabled int
	var created, updated int64
	dest := []any{&g.ID, &g.AccountID, &g.Handle, &g.Name, &g.Description, &mode, &g.Version,
		&skills, &ext, &accepts, &approved, &pairing, &g.Endpoint, &g.WebhookSecret, &created, &updated, &mcpOff, &g.Domain, &disabled}
	if err := s.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	g.Mode = switchboard.DeliveryMode(mode)
	g.AcceptsTasks = accepts != 0
	g.Approved = approved != 0
	g.Pairing = switchboard.PairingMode(pairing)
	g.MCPOff = mcpOff != 0
	g.AccountDisabled = disabled != 0
	g.CreatedAt, g.UpdatedAt = fromNanos(created), fromNanos(updated)
	if err := json.Unmarshal([]byte(skills), &g.Skills); err != nil {
		return nil, fmt.Errorf("decode skills of agent %s: %w", g.ID, err)
	}
	if err := json.Unmarshal([]byte(ext), &g.ExtendedSkills); err != nil {
		return nil, fmt.Errorf("decode extended skills of agent %s: %w", g.ID, err)
	}
	return &g, nil
}

// skillKeys returns what discovery matches a skill by: the ids and tags of
// the public skills, lower case, each once.
func skillKeys(skills []a2a.AgentSkill) []string {
	seen := make(map[string]bool)
	var out []string
	add := func(k string) {
		k = strings.ToLower(strings.TrimSpace(k))
		if k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, sk := range skills {
		add(sk.ID)
		for _, tag := range sk.Tags {
			add(tag)
		}
	}
	return out
}

// writeSkillKeys records the agent's skill keys (agent_skills), which
// must hold none of the agent's yet.
func (db *DB) writeSkillKeys(ctx context.Context, tx *sql.Tx, agentID string, skills []a2a.AgentSkill) error {
	keys := skillKeys(skills)
	for chunk := range slices.Chunk(keys, listChunk) {
		w := &where{args: []any{agentID}}
		var b strings.Builder
		for i, k := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("($1, " + w.arg(k) + ")")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_skills (agent_id, skill) VALUES `+b.String(), w.args...); err != nil {
			return err
		}
	}
	return nil
}
