package store

import (
	"context"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// RefreshToken is a refresh token's row: whom it stands for and until when. Its secret is
// stored only as a hash.
type RefreshToken struct {
	ID          uuid.UUID `db:"id"`
	SecretHash  []byte    `db:"secret_hash"`
	SubjectKind string    `db:"subject_kind"` // RefreshForUser or RefreshForAPIKey
	SubjectID   uuid.UUID `db:"subject_id"`
	// KeyStamp is the fingerprint of an API key's secret when the token was issued (nil for a
	// person's token): a token whose stamp is not the key's current one is refused.
	KeyStamp  []byte    `db:"key_stamp"`
	CreatedAt time.Time `db:"created_at"`
	ExpiresAt time.Time `db:"expires_at"`
}

// What a refresh token stands for.
const (
	RefreshForUser   = "user"
	RefreshForAPIKey = "api-key"
)

// MaxRefreshTokensPerSubject bounds the table: issuing one more deletes the subject's oldest.
const MaxRefreshTokensPerSubject = 20

// ErrBadRefreshToken says a presented refresh token is unknown, wrong, expired or revoked.
var ErrBadRefreshToken = errors.New("the refresh token is not valid")

const refreshTokenColumns = `id, secret_hash, subject_kind, subject_id, key_stamp, created_at, expires_at`

// CreateRefreshToken stores a refresh token, deleting the subject's expired ones and, beyond
// MaxRefreshTokensPerSubject, its oldest, under a lock on the subject's rows.
func (s *Store) CreateRefreshToken(ctx context.Context, t RefreshToken) (RefreshToken, error) {
	var out RefreshToken
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('refresh_tokens:' || $1::text))`, t.SubjectID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			DELETE FROM refresh_tokens WHERE subject_kind = $1 AND subject_id = $2
			AND (expires_at <= now() OR id IN (
				SELECT id FROM refresh_tokens WHERE subject_kind = $1 AND subject_id = $2
				ORDER BY created_at DESC, id OFFSET $3))`, t.SubjectKind, t.SubjectID, MaxRefreshTokensPerSubject-1); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			INSERT INTO refresh_tokens (id, secret_hash, subject_kind, subject_id, key_stamp, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+refreshTokenColumns,
			t.ID, t.SecretHash, t.SubjectKind, t.SubjectID, t.KeyStamp, t.ExpiresAt)
		out, err = scanOne[RefreshToken](rows, err, "refresh token")
		return err
	})
	return out, err
}

// CheckRefreshToken returns the refresh token id if secretHash is its secret's and it has not
// expired (ErrBadRefreshToken otherwise: unknown, wrong, expired or deleted by a logout).
func (s *Store) CheckRefreshToken(ctx context.Context, id uuid.UUID, secretHash []byte) (RefreshToken, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+refreshTokenColumns+` FROM refresh_tokens WHERE id = $1`, id)
	t, err := scanOne[RefreshToken](rows, err, "refresh token")
	if errors.Is(err, ErrNotFound) {
		return RefreshToken{}, ErrBadRefreshToken
	}
	if err != nil {
		return RefreshToken{}, err
	}
	if subtle.ConstantTimeCompare(t.SecretHash, secretHash) != 1 || !t.ExpiresAt.After(time.Now()) {
		return RefreshToken{}, ErrBadRefreshToken
	}
	return t, nil
}

// RevokeRefreshToken deletes the refresh token id if secretHash is its secret's; revoking one
// that is unknown or already revoked is not an error (RFC 7009 section 2.2), so a logout can
// be repeated.
func (s *Store) RevokeRefreshToken(ctx context.Context, id uuid.UUID, secretHash []byte) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM refresh_tokens WHERE id = $1 AND secret_hash = $2`, id, secretHash)
	return classify(err)
}
