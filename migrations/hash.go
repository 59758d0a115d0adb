package migrations

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
)

// Hash identifies the embedded migration files by content: it changes whenever a migration is
// added, removed, renamed or edited. Test helpers name their template database after it, so
// that a long-lived test server never serves a template built from older migrations.
func Hash() string {
	h := sha256.New()
	// WalkDir visits in lexical order, so the hash does not depend on directory order.
	fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		// Length-prefix both parts so that no two different file sets hash alike.
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(path)))
		h.Write(n[:])
		h.Write([]byte(path))
		binary.BigEndian.PutUint64(n[:], uint64(len(content)))
		h.Write(n[:])
		h.Write(content)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}
