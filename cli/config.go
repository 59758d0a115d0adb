package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"
)

// Config is what the command line keeps between runs in config.yaml under the user's
// configuration directory (os.UserConfigDir()/arbiter, 0600): the server, the default project
// and the sign-in — an access token and the refresh token it is renewed with, never a secret or
// password.
type Config struct {
	URL     string `json:"url,omitempty"`
	Project string `json:"project,omitempty"`
	// Subject is whom the sign-in stands for, as login was told it (a key's client id or a
	// user name), shown by the commands that say who you are.
	Subject       string    `json:"subject,omitempty"`
	AccessToken   string    `json:"accessToken,omitempty"`
	AccessExpires time.Time `json:"accessTokenExpiresAt,omitzero"`
	RefreshToken  string    `json:"refreshToken,omitempty"`
}

// configPath is the config file: ARBITER_CONFIG if set, else config.yaml in arbiter/ under
// the user's configuration directory.
func configPath(env func(string) string) (string, error) {
	if p := env("ARBITER_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", usageError("no configuration directory to keep the sign-in in (%v); set ARBITER_CONFIG to a file path", err)
	}
	return filepath.Join(dir, "arbiter", "config.yaml"), nil
}

// loadConfig reads the config file; a missing one is an empty Config.
func loadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, usageError("the config file %s cannot be read: %v", path, err)
	}
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return c, usageError("the config file %s is not valid: %v; fix it or delete it and sign in again", path, err)
	}
	return c, nil
}

// saveConfig writes the config file with permissions 0600 (its directory 0700), replacing it
// whole so a reader never sees half of it.
func saveConfig(path string, c Config) error {
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("keeping the sign-in: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return fmt.Errorf("keeping the sign-in: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
