package store

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// APIKey is a service account's key: its secret is stored only as a hash.
type APIKey struct {
	ID         uuid.UUID  `db:"id"`
	Name       string     `db:"name"`
	SecretHash []byte     `db:"secret_hash"`
	Role       string     `db:"role"`
	ScopeType  string     `db:"scope_type"`
	ScopeID    *uuid.UUID `db:"scope_id"`
	ExpiresAt  time.Time  `db:"expires_at"`
	RevokedAt  *time.Time `db:"revoked_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
	CreatedAt  time.Time  `db:"created_at"`
	CreatedBy  string     `db:"created_by"`
}

// NewAPIKey is what an admin gives to create a key; ID and SecretHash come from auth.NewAPIKey.
type NewAPIKey struct {
	ID                    uuid.UUID
	Name, Role, ScopeType string
	ScopeID               *uuid.UUID
	ExpiresAt             time.Time
	SecretHash            []byte
}

// APIKeys lists every key, newest first (revoked and expired ones too, marked as such).
func (s *Store) APIKeys(ctx context.Context) ([]APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT * FROM api_keys ORDER BY created_at DESC, id`)
	return scanAll[APIKey](rows, err)
}

// CreateAPIKey stores a key, with its audit row.
func (s *Store) CreateAPIKey(ctx context.Context, n NewAPIKey, by Actor) (APIKey, error) {
	n.Name = strings.TrimSpace(n.Name)
	if n.Name == "" {
		return APIKey{}, InvalidField("name", "an API key needs a name that says which service uses it")
	}
	if !n.ExpiresAt.After(time.Now()) {
		return APIKey{}, InvalidField("expiresAt", "an API key's expiry must be in the future")
	}
	var out APIKey
	entry := by.entry("create", "api-key", n.ID.String(), n.Name)
	err := s.changeConfig(ctx, "api_keys", entry, func(tx pgx.Tx, e *AuditEntry) error {
		rows, err := tx.Query(ctx, `
			INSERT INTO api_keys (id, name, secret_hash, role, scope_type, scope_id, expires_at, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
			n.ID, n.Name, n.SecretHash, n.Role, n.ScopeType, n.ScopeID, n.ExpiresAt, by.Subject)
		out, err = scanOne[APIKey](rows, err, "API key")
		if errors.Is(err, ErrConflict) {
			return ConflictField("name", "an API key named %q already exists; pick another name", n.Name)
		}
		e.HTTPStatus = 201
		e.Changes = map[string]any{"name": n.Name, "role": n.Role, "scopeType": n.ScopeType, "scopeId": n.ScopeID,
			"expiresAt": n.ExpiresAt}
		return err
	})
	return out, err
}

// RevokeAPIKey revokes a key at once, with its audit row.
func (s *Store) RevokeAPIKey(ctx context.Context, id uuid.UUID, by Actor) error {
	entry := by.entry("revoke", "api-key", id.String(), "")
	return s.changeConfig(ctx, "api_keys", entry, func(tx pgx.Tx, e *AuditEntry) error {
		rows, err := tx.Query(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING *`, id)
		k, err := scanOne[APIKey](rows, err, "API key "+id.String())
		if err != nil {
			return err
		}
		e.EntityName = k.Name
		e.HTTPStatus = 204
		e.Changes = map[string]any{"revokedAt": Change{From: nil, To: k.RevokedAt}}
		return nil
	})
}

// ErrBadKey says a presented API key is unknown, wrong, revoked or expired; the caller answers
// 401 without telling which.
var ErrBadKey = errors.New("the API key is not valid")

// ErrUnknownKey is the ErrBadKey of a key id no key has: the web layer counts such refusals
// rather than writing each to the audit log (a caller may send any number of made-up ids).
// The caller is told the same as for any other bad key.
var ErrUnknownKey = fmt.Errorf("%w: no API key has this id", ErrBadKey)

// CheckAPIKey returns the key with id if secretHash matches and it is neither revoked nor
// expired, and records its use.
func (s *Store) CheckAPIKey(ctx context.Context, id uuid.UUID, secretHash []byte) (APIKey, error) {
	k, err := s.ActiveAPIKey(ctx, id)
	if err != nil {
		return APIKey{}, err
	}
	if subtle.ConstantTimeCompare(k.SecretHash, secretHash) != 1 {
		return APIKey{}, ErrBadKey
	}
	if k.LastUsedAt == nil || time.Since(*k.LastUsedAt) > time.Minute {
		_, _ = s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = now() WHERE id = $1`, id)
	}
	return k, nil
}

// ActiveAPIKey returns the key with id if it is neither revoked nor expired (ErrBadKey
// otherwise): an access token issued for the key lives no longer than the key.
func (s *Store) ActiveAPIKey(ctx context.Context, id uuid.UUID) (APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT * FROM api_keys WHERE id = $1`, id)
	k, err := scanOne[APIKey](rows, err, "API key")
	if errors.Is(err, ErrNotFound) {
		return APIKey{}, ErrUnknownKey
	}
	if err != nil {
		return APIKey{}, err
	}
	if k.RevokedAt != nil || !time.Now().Before(k.ExpiresAt) {
		return APIKey{}, ErrBadKey
	}
	return k, nil
}

// APIKeyNames maps each of ids (API key ids, as the audit log's subjects) to the key's name,
// revoked and expired keys too: a key is never deleted, revoking keeps its row. An id that is
// no key's (a failed sign-in with a made-up client id) is absent.
func (s *Store) APIKeyNames(ctx context.Context, ids []string) (map[string]string, error) {
	names := map[string]string{}
	var keys []uuid.UUID
	for _, id := range ids {
		if k, err := uuid.Parse(id); err == nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return names, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id::text, name FROM api_keys WHERE id = ANY($1)`, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		names[id] = name
	}
	return names, rows.Err()
}
