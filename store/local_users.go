package store

import (
	"context"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MaxLocalUsers bounds the local accounts (the bootstrap admin included): an admin may
// create people up to it; past it a create is refused with a conflict that says so.
const MaxLocalUsers = 1000

// usersLock is the transaction-level advisory lock every change of local accounts takes
// ("users" in ASCII), so that two creates cannot both pass the bound and two deletes cannot
// both leave the other as the last admin.
const usersLock int64 = 0x7573657273

// userName is what Run:ai calls a user's username: a local account's name, a person of the
// identity provider's email (else their subject).
const userName = `CASE WHEN u.issuer = 'local' THEN u.subject ELSE coalesce(nullif(u.email, ''), u.subject) END`

// UserSpec is what the users list filters and sorts by: Run:ai's usersFilterBy and
// UsersFilterSortFields (type sorts local accounts apart from the identity provider's).
var UserSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"username":     {Kind: listquery.String, Column: userName, Sortable: true},
		"createdBy":    {Kind: listquery.String, Column: "u.created_by", Sortable: true},
		"lastLogin":    {Kind: listquery.Time, Column: "u.last_login_at", Sortable: true, Nullable: true},
		"creationTime": {Kind: listquery.Time, Column: "u.created_at", Sortable: true},
		"lastUpdated":  {Kind: listquery.Time, Column: "u.updated_at", Sortable: true},
		"isLocal":      {Kind: listquery.Bool, Column: "(u.issuer = 'local')"},
		"type":         {Kind: listquery.String, Column: "CASE WHEN u.issuer = 'local' THEN 'local' ELSE 'sso' END", Sortable: true},
	},
	DefaultSort:  "creationTime",
	TieBreak:     "u.id",
	SearchColumn: userName,
	Paged:        true,
}

// Users lists one page of the users, local and of the identity provider, as q selects.
func (s *Store) Users(ctx context.Context, q listquery.Query) ([]User, error) {
	var args listquery.Args
	rows, err := s.pool.Query(ctx, `SELECT u.* FROM users u WHERE `+q.Where(UserSpec, &args)+
		` ORDER BY `+q.OrderBy(UserSpec)+` `+q.Page(&args), args...)
	users, err := scanAll[User](rows, err)
	if err != nil {
		return nil, err
	}
	users, _ = listquery.Next(q, users)
	return users, nil
}

// CountUsers counts the users q's filters and search select.
func (s *Store) CountUsers(ctx context.Context, q listquery.Query) (int, error) {
	var args listquery.Args
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM users u WHERE `+q.Where(UserSpec, &args), args...).Scan(&n)
	return n, classify(err)
}

// CreateLocalUser creates a local account named by email (in lower case) with the password
// hash given, with its audit row. A name taken in any case, or a create past MaxLocalUsers,
// is a conflict.
func (s *Store) CreateLocalUser(ctx context.Context, email, passwordHash string, by Actor) (User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	var out User
	entry := by.entry("create", "user", "", email)
	err := s.changeUsers(ctx, entry, func(tx pgx.Tx, e *AuditEntry) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, usersLock); err != nil {
			return err
		}
		var local int
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(lower(subject) = $1), false) FROM users WHERE issuer = 'local'`,
			email).Scan(&local, &taken); err != nil {
			return err
		}
		if taken {
			return ConflictField("email", "a local user %s already exists; reset its password instead of creating it again", email)
		}
		if local >= MaxLocalUsers {
			return ConflictField("email", "this installation already has %d local users, the most it keeps; delete one you no longer need first", MaxLocalUsers)
		}
		rows, err := tx.Query(ctx, `
			INSERT INTO users (issuer, subject, email, name, password_hash, created_by)
			VALUES ('local', $1, $1, $1, $2, $3) RETURNING *`, email, passwordHash, by.Subject)
		out, err = scanOne[User](rows, err, "user "+email)
		if err != nil {
			return err
		}
		e.EntityID = out.ID.String()
		e.HTTPStatus = 201
		e.Changes = map[string]any{"username": email, "isLocal": true}
		return nil
	})
	return out, err
}

// changeUsers runs fn and its audit row in one transaction. Users are no configuration the
// scheduler reads, so unlike changeConfig it notifies nobody.
func (s *Store) changeUsers(ctx context.Context, entry AuditEntry, fn func(tx pgx.Tx, entry *AuditEntry) error) error {
	return s.InTx(ctx, func(tx pgx.Tx) error {
		if err := fn(tx, &entry); err != nil {
			return err
		}
		return insertAudit(ctx, tx, entry)
	})
}

// lockUser locks a user's row for a change and returns it.
func lockUser(ctx context.Context, tx pgx.Tx, id uuid.UUID) (User, error) {
	rows, err := tx.Query(ctx, `SELECT * FROM users WHERE id = $1 FOR UPDATE`, id)
	return scanOne[User](rows, err, "user "+id.String())
}

// ResetLocalPassword gives a local account a new password hash and ends its sessions and
// tokens of before at, with its audit row (which holds no password). A person of the
// identity provider has no password here: that is refused.
func (s *Store) ResetLocalPassword(ctx context.Context, id uuid.UUID, passwordHash string, at time.Time, by Actor) error {
	entry := by.entry("reset-password", "user", id.String(), "")
	return s.changeUsers(ctx, entry, func(tx pgx.Tx, e *AuditEntry) error {
		u, err := lockUser(ctx, tx, id)
		if err != nil {
			return err
		}
		e.EntityName = u.Username()
		if u.Issuer != LocalIssuer {
			return Invalid("%s signs in with the identity provider %s, which keeps their password; reset it there", u.Username(), u.Issuer)
		}
		_, err = tx.Exec(ctx, `UPDATE users SET password_hash = $2, signed_out_at = $3, updated_at = now() WHERE id = $1`, id, passwordHash, at)
		e.Changes = map[string]any{"password": "replaced by a temporary one", "signedOutAt": at}
		return err
	})
}

// SignOutUser ends every session and access token the user got before at, with its audit row.
func (s *Store) SignOutUser(ctx context.Context, id uuid.UUID, at time.Time, by Actor) error {
	entry := by.entry("logout", "user", id.String(), "")
	return s.changeUsers(ctx, entry, func(tx pgx.Tx, e *AuditEntry) error {
		u, err := lockUser(ctx, tx, id)
		if err != nil {
			return err
		}
		e.EntityName = u.Username()
		_, err = tx.Exec(ctx, `UPDATE users SET signed_out_at = $2 WHERE id = $1`, id, at)
		e.Changes = map[string]any{"signedOutAt": at}
		return err
	})
}

// DeleteUser removes a user with the access rules that name it as a user (by its name or
// email), with its audit row; its sessions and tokens then find no account and are refused.
// bootstrapAdmin is the local account that is an admin by configuration. Deleting the last
// local admin who can sign in (a local account with a password that is bootstrapAdmin or holds
// admin by a rule) is refused as invalid (400), so that nobody locks the installation out. A person of the
// identity provider is made again, without access, at their next sign-in.
func (s *Store) DeleteUser(ctx context.Context, id uuid.UUID, bootstrapAdmin string, by Actor) error {
	entry := by.entry("delete", "user", id.String(), "")
	return s.changeUsers(ctx, entry, func(tx pgx.Tx, e *AuditEntry) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, usersLock); err != nil {
			return err
		}
		// No admin rule may go while the last admin is weighed.
		if _, err := tx.Exec(ctx, `LOCK TABLE access_rules IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		u, err := lockUser(ctx, tx, id)
		if err != nil {
			return err
		}
		e.EntityName = u.Username()
		rows, err := tx.Query(ctx, `
			SELECT u.id FROM users u WHERE u.issuer = 'local' AND u.password_hash <> ''
			  AND (u.subject = $1 OR EXISTS (SELECT 1 FROM access_rules r
			        WHERE r.subject_type = 'user' AND r.role = 'admin' AND r.scope_type = 'system'
			          AND (lower(r.subject) = lower(u.subject) OR (u.email <> '' AND lower(r.subject) = lower(u.email)))))`, bootstrapAdmin)
		if err != nil {
			return err
		}
		admins, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return err
		}
		if len(admins) == 1 && admins[0] == id {
			// Invalid, not Conflict: Run:ai's delete_user_by_id answers 400, not 409.
			return Invalid("%s is the last local admin who can sign in; give another local user the admin role at system scope "+
				"(an access rule naming it) before deleting this one, so that someone can still manage this installation", u.Username())
		}
		tag, err := tx.Exec(ctx, `
			DELETE FROM access_rules WHERE subject_type = 'user'
			  AND (lower(subject) = lower($1) OR ($2 <> '' AND lower(subject) = lower($2)))`, u.Subject, u.Email)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM users WHERE id = $1`, id); err != nil {
			return err
		}
		e.HTTPStatus = 204
		e.Changes = map[string]any{"removed": map[string]any{"username": u.Username(), "isLocal": u.Issuer == LocalIssuer},
			"accessRulesRemoved": tag.RowsAffected()}
		return nil
	})
}

// Username is the user's name as the users list shows it (userName in SQL): a local
// account's name, else the person's email, else their subject at the identity provider.
func (u User) Username() string {
	if u.Issuer == LocalIssuer || u.Email == "" {
		return u.Subject
	}
	return u.Email
}
