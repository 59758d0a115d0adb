package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// A person's access keys are rows of api_keys with an owner and no role: the key acts with its
// person's access rules as they are at each use (docs/security.md "Access keys"), and goes
// with the person (the owner's foreign key deletes it).

// MaxAccessKeysPerPerson bounds the access keys one person holds at once (expired ones count
// until deleted): enough for a laptop, a few scripts and a CI job each.
const MaxAccessKeysPerPerson = 20

// NewAccessKey is what a person gives to create their own key; ID and SecretHash come from
// auth.NewAPIKey.
type NewAccessKey struct {
	ID          uuid.UUID
	OwnerUserID uuid.UUID
	Name        string
	ExpiresAt   time.Time
	SecretHash  []byte
}

// CreateAccessKey stores a person's key, with its audit row. The person's row is locked while
// their keys are counted, so two requests at once cannot pass the bound together.
func (s *Store) CreateAccessKey(ctx context.Context, n NewAccessKey, by Actor) (APIKey, error) {
	n.Name = strings.TrimSpace(n.Name)
	if n.Name == "" {
		return APIKey{}, InvalidField("name", "an access key needs a name that says where it is used")
	}
	if !n.ExpiresAt.After(time.Now()) {
		return APIKey{}, InvalidField("expiresAt", "an access key's expiry must be in the future")
	}
	var out APIKey
	entry := by.entry("create", "access-key", n.ID.String(), n.Name)
	err := s.changeConfig(ctx, "api_keys", entry, func(tx pgx.Tx, e *AuditEntry) error {
		// Lock first, count after: the count must see the keys of a create that held the
		// lock before this one (its own statement, so its own snapshot, in READ COMMITTED).
		var locked uuid.UUID
		err := tx.QueryRow(ctx, `SELECT id FROM users WHERE id = $1 FOR UPDATE`, n.OwnerUserID).Scan(&locked)
		if errors.Is(err, pgx.ErrNoRows) {
			return NotFound("the account %s no longer exists", n.OwnerUserID)
		}
		if err != nil {
			return classify(err)
		}
		var held int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE owner_user_id = $1`, n.OwnerUserID).Scan(&held); err != nil {
			return classify(err)
		}
		if held >= MaxAccessKeysPerPerson {
			return Conflict("you hold %d access keys, the most one person may; delete one you no longer use first", held)
		}
		rows, err := tx.Query(ctx, `
			INSERT INTO api_keys (id, name, secret_hash, owner_user_id, expires_at, created_by)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+apiKeyColumns,
			n.ID, n.Name, n.SecretHash, n.OwnerUserID, n.ExpiresAt, by.Subject)
		out, err = scanOne[APIKey](rows, err, "access key")
		if errors.Is(err, ErrConflict) {
			return ConflictField("name", "you already have an access key named %q; pick another name", n.Name)
		}
		e.HTTPStatus = 201
		e.Changes = map[string]any{"name": n.Name, "expiresAt": n.ExpiresAt}
		return err
	})
	return out, err
}

// AccessKeyFilter narrows the admin's list of every person's keys: by client id (the key's
// id) and by who made it; empty fields do not narrow.
type AccessKeyFilter struct {
	OwnerUserID *uuid.UUID
	ClientID    *uuid.UUID
	CreatedBy   string
}

// AccessKeys lists people's access keys that f selects, newest first (at most
// MaxAccessKeysPerPerson for one owner; the admin's list is as long as people's keys are many).
func (s *Store) AccessKeys(ctx context.Context, f AccessKeyFilter) ([]APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys
		WHERE owner_user_id IS NOT NULL
		  AND ($1::uuid IS NULL OR owner_user_id = $1)
		  AND ($2::uuid IS NULL OR id = $2)
		  AND ($3 = '' OR created_by = $3)
		ORDER BY created_at DESC, id`, f.OwnerUserID, f.ClientID, f.CreatedBy)
	return scanAll[APIKey](rows, err)
}

// AccessKey returns the access key id of owner (NotFound for anyone else's, so ids reveal
// nothing).
func (s *Store) AccessKey(ctx context.Context, owner, id uuid.UUID) (APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = $1 AND owner_user_id = $2`, id, owner)
	return scanOne[APIKey](rows, err, "access key "+id.String())
}

// DeleteAccessKey deletes a person's access key, with its audit row: owner's only, or
// anyone's when owner is nil (the admin). A service account's key is NotFound here.
func (s *Store) DeleteAccessKey(ctx context.Context, id uuid.UUID, owner *uuid.UUID, by Actor) error {
	entry := by.entry("delete", "access-key", id.String(), "")
	return s.changeConfig(ctx, "api_keys", entry, func(tx pgx.Tx, e *AuditEntry) error {
		rows, err := tx.Query(ctx, `DELETE FROM api_keys WHERE id = $1 AND owner_user_id IS NOT NULL
			AND ($2::uuid IS NULL OR owner_user_id = $2) RETURNING `+apiKeyColumns, id, owner)
		k, err := scanOne[APIKey](rows, err, "access key "+id.String())
		if err != nil {
			return err
		}
		e.EntityName = k.Name
		e.HTTPStatus = 204
		e.Changes = map[string]any{"removed": map[string]any{"name": k.Name, "owner": k.OwnerUserID, "createdBy": k.CreatedBy}}
		return nil
	})
}
