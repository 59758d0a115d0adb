package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/arbiterhq/arbiter/internal/pglocal"
	"github.com/arbiterhq/arbiter/migrations"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Database opens the configured database: the given URL, or a private PostgreSQL started in
// the data dir. The returned stop function closes what was opened.
func Database(ctx context.Context, c Config, log *slog.Logger) (url string, stop func(), err error) {
	if c.DatabaseURL != "" {
		return c.DatabaseURL, func() {}, nil
	}
	log.Info("starting a private PostgreSQL", "dir", filepath.Join(c.DataDir, "postgres"))
	pg, err := pglocal.Start(ctx, pglocal.Options{Dir: filepath.Join(c.DataDir, "postgres"), Log: log})
	if err != nil {
		return "", nil, err
	}
	return pg.URL("arbiter"), func() {
		if err := pg.Stop(); err != nil {
			log.Warn("private PostgreSQL did not stop cleanly", "err", err)
		}
	}, nil
}

// Serve runs the console, the API and (later) the scheduler until ctx is cancelled, then
// shuts everything down in order. ready, if not nil, receives the URL once serving.
func Serve(ctx context.Context, c Config, log *slog.Logger, out io.Writer, ready chan<- string) error {
	dbURL, stopDB, err := Database(ctx, c, log)
	if err != nil {
		return err
	}
	defer stopDB()
	if err := migrations.Up(dbURL); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	defer pool.Close()
	st := store.New(pool)

	handler := web.New(web.Deps{
		Properties: st,
		Audit:      st,
		Ready:      st.Ping,
		Log:        log,

		Organization: st,
	})
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	url := "http://" + displayAddr(ln.Addr().String())
	log.Info("Arbiter is serving", "url", url)
	fmt.Fprintf(out, "\n  Arbiter is running at %s\n  (no login yet: the console is bound to loopback and you are the local operator)\n\n", url)
	if ready != nil {
		ready <- url
	}

	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// displayAddr makes a listen address clickable: 0.0.0.0 and [::] become 127.0.0.1.
func displayAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
