package backup

import (
	"encoding/json"
	"fmt"
	"time"
)

// Names of the archive's members.
const (
	// ManifestName is the archive's first member: the Manifest, as JSON.
	ManifestName = "switchboard-backup.json"
	// DatabaseName is the database's member, named as in a data directory.
	DatabaseName = "switchboard.db"
)

// Format and Version identify a backup file's manifest.
const (
	Format  = "switchboard-backup"
	Version = 1
)

// Manifest describes a backup: the archive's first member.
type Manifest struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	// Switchboard is the version of the binary that made it.
	Switchboard string `json:"switchboard,omitempty"`
	Engine      string `json:"engine"`
	// Schema is the last migration applied to the database.
	Schema string `json:"schema"`
	// SealedKeyIDs are the keys the database's sealed secrets need;
	// IncludedKeyIDs those of the key file in the backup (none without
	// one). A needed key that is not included must come from elsewhere.
	SealedKeyIDs   []string `json:"sealed_key_ids"`
	IncludedKeyIDs []string `json:"included_key_ids"`
	// Files are the archive's other members, in order.
	Files []string `json:"files"`
}

// MissingKeyIDs returns the keys the database needs that the backup does
// not hold.
func (m *Manifest) MissingKeyIDs() []string {
	return missing(m.SealedKeyIDs, m.IncludedKeyIDs)
}

// missing returns the ids of need that are not in have.
func missing(need, have []string) []string {
	var out []string
	for _, id := range need {
		found := false
		for _, h := range have {
			found = found || h == id
		}
		if !found {
			out = append(out, id)
		}
	}
	return out
}

// parseManifest reads a manifest and checks that it is one this package
// reads.
func parseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not a Switchboard backup: its manifest: %w", err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("not a Switchboard backup: format %q", m.Format)
	}
	if m.Version != Version {
		return nil, fmt.Errorf("a backup of version %d, which this version of switchboard does not read (it reads %d)", m.Version, Version)
	}
	if m.Engine != "sqlite" {
		return nil, fmt.Errorf("a backup of engine %q: only sqlite backups are restored", m.Engine)
	}
	return &m, nil
}
