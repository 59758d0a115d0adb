package pglocal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrNoBinaries is returned (wrapped) when the PostgreSQL server binaries cannot be found.
var ErrNoBinaries = errors.New("PostgreSQL server binaries (initdb, postgres) not found on PATH or under /usr/lib/postgresql/*/bin; install the PostgreSQL server: apt-get install -y postgresql")

// postgresqlLibDir is where Debian and Ubuntu install the server binaries, one directory per
// major version, without putting them on PATH. A variable so that tests can point it elsewhere.
var postgresqlLibDir = "/usr/lib/postgresql"

// Binaries are the server programs of one PostgreSQL installation.
type Binaries struct {
	Initdb   string // path of initdb
	Postgres string // path of postgres
	// Major is the major version read from the directory name (/usr/lib/postgresql/15/bin),
	// 0 when the binaries came from PATH and the version is not known from their location.
	Major int
}

// FindBinaries returns the server binaries to use: initdb and postgres from the same directory
// on PATH if there is one, else those of the highest version under /usr/lib/postgresql/*/bin.
func FindBinaries() (Binaries, error) {
	candidates := findAllBinaries()
	if len(candidates) == 0 {
		return Binaries{}, ErrNoBinaries
	}
	return candidates[0], nil
}

// findAllBinaries lists every usable installation, in order of preference: PATH first (the
// user put it there on purpose), then /usr/lib/postgresql/<major>/bin, highest major first.
func findAllBinaries() []Binaries {
	var found []Binaries
	if initdb, err := exec.LookPath("initdb"); err == nil {
		// initdb and postgres must be the same version, so take postgres from initdb's directory.
		if postgres := filepath.Join(filepath.Dir(initdb), "postgres"); isExecutable(postgres) {
			found = append(found, Binaries{Initdb: initdb, Postgres: postgres})
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(postgresqlLibDir, "*", "bin"))
	var versioned []Binaries
	for _, dir := range dirs {
		major, err := strconv.Atoi(strings.SplitN(filepath.Base(filepath.Dir(dir)), ".", 2)[0])
		if err != nil {
			continue
		}
		b := Binaries{Initdb: filepath.Join(dir, "initdb"), Postgres: filepath.Join(dir, "postgres"), Major: major}
		if isExecutable(b.Initdb) && isExecutable(b.Postgres) {
			versioned = append(versioned, b)
		}
	}
	sort.SliceStable(versioned, func(i, j int) bool { return versioned[i].Major > versioned[j].Major })
	return append(found, versioned...)
}

// binariesFor picks the installation for a data directory initialised by major version
// dataMajor: a server refuses data files of another major version, so prefer an exact match.
func binariesFor(dataMajor int) (Binaries, error) {
	candidates := findAllBinaries()
	if len(candidates) == 0 {
		return Binaries{}, ErrNoBinaries
	}
	if dataMajor == 0 {
		return candidates[0], nil
	}
	for _, b := range candidates {
		if b.Major == dataMajor {
			return b, nil
		}
	}
	for _, b := range candidates {
		if b.Major == 0 { // from PATH, version unknown: let the server decide
			return b, nil
		}
	}
	return Binaries{}, fmt.Errorf("the data directory was initialised by PostgreSQL %d, but only PostgreSQL %d is installed; install postgresql-%d or move the data directory away", dataMajor, candidates[0].Major, dataMajor)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}
