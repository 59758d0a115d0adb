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

// APIKey is a key: a service account's (with its own role at its scope) or a person's access
// key (OwnerUserID set, no role: it acts with the person's access rules). Its secret is stored
// only as a hash.
type APIKey struct {
	ID         uuid.UUID  `db:"id"`
	Name       string     `db:"name"`
	SecretHash []byte     `db:"secret_hash"`
	Role       string     `db:"role"`       // "" for a person's key
	ScopeType  string     `db:"scope_type"` // "" for a person's key
	ScopeID    *uuid.UUID `db:"scope_id"`
	ExpiresAt  time.Time  `db:"expires_at"`
	RevokedAt  *time.Time `db:"revoked_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
	CreatedAt  time.Time  `db:"created_at"`
	CreatedBy  string     `db:"created_by"`
	// OwnerUserID is the person whose access key this is; nil for a service account's.
	OwnerUserID *uuid.UUID `db:"owner_user_id"`
	DisabledAt  *time.Time `db:"disabled_at"`
	UpdatedAt   time.Time  `db:"updated_at"`
}

// apiKeyColumns are an APIKey's columns, a person's key's missing role and scope read as "".
const apiKeyColumns = `id, name, secret_hash, coalesce(role, '') AS role, coalesce(scope_type, '') AS scope_type, scope_id,
	expires_at, revoked_at, last_used_at, created_at, created_by, owner_user_id, disabled_at, updated_at`

// NewAPIKey is what an admin gives to create a key; ID and SecretHash come from auth.NewAPIKey.
type NewAPIKey struct {
	ID                    uuid.UUID
	Name, Role, ScopeType string
	ScopeID               *uuid.UUID
	ExpiresAt             time.Time
	SecretHash            []byte
}

// APIKeys lists every service account's key, newest first (revoked and expired ones too,
// marked as such); people's own keys are not among them.
func (s *Store) APIKeys(ctx context.Context) ([]APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE owner_user_id IS NULL ORDER BY created_at DESC, id`)
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
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+apiKeyColumns,
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

// RevokeAPIKey revokes a service account's key at once, with its audit row.
func (s *Store) RevokeAPIKey(ctx context.Context, id uuid.UUID, by Actor) error {
	entry := by.entry("revoke", "api-key", id.String(), "")
	return s.changeConfig(ctx, "api_keys", entry, func(tx pgx.Tx, e *AuditEntry) error {
		rows, err := tx.Query(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
			WHERE id = $1 AND owner_user_id IS NULL RETURNING `+apiKeyColumns, id)
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

// ErrBadKey says a presented API key is unknown, wrong, revoked, disabled or expired; the caller answers
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

// ActiveAPIKey returns the key with id if it is neither revoked, disabled nor expired
// (ErrBadKey otherwise): an access token issued for the key lives no longer than the key.
func (s *Store) ActiveAPIKey(ctx context.Context, id uuid.UUID) (APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = $1`, id)
	k, err := scanOne[APIKey](rows, err, "API key")
	if errors.Is(err, ErrNotFound) {
		return APIKey{}, ErrUnknownKey
	}
	if err != nil {
		return APIKey{}, err
	}
	if k.RevokedAt != nil || k.DisabledAt != nil || !time.Now().Before(k.ExpiresAt) {
		return APIKey{}, ErrBadKey
	}
	return k, nil
}

// APIKeyNames maps each of ids (API key ids, as the audit log's subjects) to the key's name,
// revoked and expired keys too: a service account's key is never deleted, revoking keeps its
// row. An id that is no key's (a failed sign-in with a made-up client id, or a person's
// deleted access key) is absent.
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

// ServiceAccounts lists the service accounts' keys not revoked (Run:ai's service accounts:
// a revoked one is a deleted one), newest first.
func (s *Store) ServiceAccounts(ctx context.Context) ([]APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys
		WHERE owner_user_id IS NULL AND revoked_at IS NULL ORDER BY created_at DESC, id`)
	return scanAll[APIKey](rows, err)
}

// ServiceAccount returns the service account's key with id, unless it was revoked (NotFound).
func (s *Store) ServiceAccount(ctx context.Context, id uuid.UUID) (APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys
		WHERE id = $1 AND owner_user_id IS NULL AND revoked_at IS NULL`, id)
	return scanOne[APIKey](rows, err, "service account "+id.String())
}

// SetAPIKeyEnabled disables a service account's key (refused at use until enabled again) or
// enables it, with its audit row; a revoked key is NotFound.
func (s *Store) SetAPIKeyEnabled(ctx context.Context, id uuid.UUID, enabled bool, by Actor) (APIKey, error) {
	var out APIKey
	entry := by.entry("update", "api-key", id.String(), "")
	err := s.changeConfig(ctx, "api_keys", entry, func(tx pgx.Tx, e *AuditEntry) error {
		rows, err := tx.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys
			WHERE id = $1 AND owner_user_id IS NULL AND revoked_at IS NULL FOR UPDATE`, id)
		old, err := scanOne[APIKey](rows, err, "service account "+id.String())
		if err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `UPDATE api_keys SET
				disabled_at = CASE WHEN $2 THEN NULL ELSE coalesce(disabled_at, now()) END,
				updated_at = CASE WHEN (disabled_at IS NULL) = $2 THEN updated_at ELSE now() END
			WHERE id = $1 RETURNING `+apiKeyColumns, id, enabled)
		if out, err = scanOne[APIKey](rows, err, "service account "+id.String()); err != nil {
			return err
		}
		e.EntityName = out.Name
		e.Changes = map[string]any{"enabled": Change{From: old.DisabledAt == nil, To: enabled}}
		return nil
	})
	return out, err
}

// RegenerateKeySecret replaces the secret of key id with the one secretHash is the hash of,
// with its audit row: the old secret is refused from now on. owner is the person whose access
// key it must be, or nil for a service account's key; any other key is NotFound.
func (s *Store) RegenerateKeySecret(ctx context.Context, id uuid.UUID, owner *uuid.UUID, secretHash []byte, by Actor) (APIKey, error) {
	var out APIKey
	what, entityType := "service account "+id.String(), "api-key"
	if owner != nil {
		what, entityType = "access key "+id.String(), "access-key"
	}
	entry := by.entry("regenerate-secret", entityType, id.String(), "")
	err := s.changeConfig(ctx, "api_keys", entry, func(tx pgx.Tx, e *AuditEntry) error {
		rows, err := tx.Query(ctx, `UPDATE api_keys SET secret_hash = $2, updated_at = now()
			WHERE id = $1 AND owner_user_id IS NOT DISTINCT FROM $3 AND revoked_at IS NULL RETURNING `+apiKeyColumns,
			id, secretHash, owner)
		if out, err = scanOne[APIKey](rows, err, what); err != nil {
			return err
		}
		e.EntityName = out.Name
		e.Changes = map[string]any{"secret": "regenerated"}
		return nil
	})
	return out, err
}
