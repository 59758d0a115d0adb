package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// LocalIssuer is the issuer of local accounts (the bootstrap admin).
const LocalIssuer = "local"

// User is a person who has signed in, kept by issuer and subject (docs/security.md "Signing in").
type User struct {
	ID           uuid.UUID  `db:"id"`
	Issuer       string     `db:"issuer"`
	Subject      string     `db:"subject"`
	Email        string     `db:"email"`
	Name         string     `db:"name"`
	Groups       []string   `db:"groups"`
	PasswordHash string     `db:"password_hash"`
	LastLoginAt  *time.Time `db:"last_login_at"`
	CreatedAt    time.Time  `db:"created_at"`
	UpdatedAt    time.Time  `db:"updated_at"`
	CreatedBy    string     `db:"created_by"` // the admin who created a local account; else "system"
	// SignedOutAt ends every session and access token the user got before it (an admin
	// signed the user out or reset the password); nil: never.
	SignedOutAt *time.Time `db:"signed_out_at"`
}

// SignedInBefore says whether a session or token begun at start ended with a sign-out.
func (u User) SignedInBefore(start time.Time) bool {
	return u.SignedOutAt != nil && !start.After(*u.SignedOutAt)
}

// UpsertOIDCUser records a user's claims at sign-in (or at a bearer-token call) and returns the row.
func (s *Store) UpsertOIDCUser(ctx context.Context, issuer, subject, email, name string, groups []string, login bool) (User, error) {
	if groups == nil {
		groups = []string{}
	}
	rows, err := s.pool.Query(ctx, `
		INSERT INTO users (issuer, subject, email, name, groups, last_login_at)
		VALUES ($1, $2, $3, $4, $5, CASE WHEN $6 THEN now() END)
		ON CONFLICT (issuer, subject) DO UPDATE SET email = EXCLUDED.email, name = EXCLUDED.name,
			groups = EXCLUDED.groups, updated_at = now(),
			last_login_at = CASE WHEN $6 THEN now() ELSE users.last_login_at END
		RETURNING *`, issuer, subject, email, name, groups, login)
	return scanOne[User](rows, err, "user "+subject)
}

// User returns one user.
func (s *Store) User(ctx context.Context, id uuid.UUID) (User, error) {
	rows, err := s.pool.Query(ctx, `SELECT * FROM users WHERE id = $1`, id)
	return scanOne[User](rows, err, "user "+id.String())
}

// LocalUser returns the local account with that name, in any case (CreateLocalUser keeps
// names unique regardless of case).
func (s *Store) LocalUser(ctx context.Context, name string) (User, error) {
	rows, err := s.pool.Query(ctx, `SELECT * FROM users WHERE issuer = 'local' AND lower(subject) = lower($1)`, name)
	return scanOne[User](rows, err, "local user "+name)
}

// EnsureLocalUser creates the local account if it does not exist, with the hash hashFn makes;
// with replace it also sets the password of an existing account. created says whether the
// account was new.
func (s *Store) EnsureLocalUser(ctx context.Context, name, displayName string, replace bool, hashFn func() (string, error)) (created bool, err error) {
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE issuer = $1 AND subject = $2)`, LocalIssuer, name).Scan(&exists); err != nil {
			return err
		}
		if exists && !replace {
			return nil
		}
		hash, err := hashFn()
		if err != nil {
			return err
		}
		created = !exists
		_, err = tx.Exec(ctx, `
			INSERT INTO users (issuer, subject, name, password_hash) VALUES ($1, $2, $3, $4)
			ON CONFLICT (issuer, subject) DO UPDATE SET password_hash = EXCLUDED.password_hash, updated_at = now()`,
			LocalIssuer, name, displayName, hash)
		return err
	})
	return created, err
}

// TouchLogin records a successful sign-in.
func (s *Store) TouchLogin(ctx context.Context, id uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `UPDATE users SET last_login_at = now() WHERE id = $1`, id)
	return classify(err)
}
