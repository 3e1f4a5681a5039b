package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/freeport"
	"github.com/samsa-io/samsa/internal/task"
)

// Server is a running PostgreSQL.
type Server struct {
	Host string
	Port int
	User string // the superuser, with trust authentication on loopback
	Dir  string
	cmd  *exec.Cmd
	log  *bytes.Buffer
	bin  string
	data string
	cred *syscall.Credential
}

// DSN is a libpq connection string for a database (e.g. "postgres").
func (s *Server) DSN(database string) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", s.User, s.Host, s.Port, database)
}

// JDBCURL is the same database as a JDBC URL (the JDBC connectors' connection.url).
func (s *Server) JDBCURL(database string) string {
	return fmt.Sprintf("jdbc:postgresql://%s:%d/%s", s.Host, s.Port, database)
}

// binDir finds the server binaries: Debian keeps them under
// /usr/lib/postgresql/<major>/bin; PATH may have wrappers.
func binDir() (string, error) {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	p, err := exec.LookPath("postgres")
	if err != nil {
		return "", fmt.Errorf("pgtest: no PostgreSQL server binaries (install Debian's postgresql): %w", err)
	}
	return filepath.Dir(p), nil
}

// Start runs a server for the test; it fails the test when PostgreSQL is
// missing (the connectors' tests need it: CI installs Debian's package).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "samsa-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cred, owner, err := runAs(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", owner, "--auth=trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	port, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Host: "127.0.0.1", Port: port, User: owner, Dir: dir, log: &bytes.Buffer{}, bin: bin, data: data, cred: cred}
	if err := s.launch(); err != nil {
		t.Fatalf("pgtest: start postgres: %v", err)
	}
	t.Cleanup(s.stop)
	if err := s.waitReady(30 * time.Second); err != nil {
		t.Fatalf("pgtest: %v\n%s", err, s.log.String())
	}
	return s
}

// launch starts the server process on the data directory.
func (s *Server) launch() error {
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.data, "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+s.Dir,
		"-c", "wal_level=logical", "-c", "max_replication_slots=8", "-c", "max_wal_senders=8",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	return s.cmd.Start()
}

// Restart kills the server (SIGKILL, as a crash) and starts it again on the
// same data directory and port, after crash recovery: what a client sees
// when its database host restarts.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	_ = s.cmd.Wait()
	if err := s.launch(); err != nil {
		t.Fatalf("pgtest: restart postgres: %v", err)
	}
	if err := s.waitReady(30 * time.Second); err != nil {
		t.Fatalf("pgtest: restart: %v\n%s", err, s.log.String())
	}
}

// runAs picks who runs the server: the current user, or as root the
// postgres system user, given the directory.
func runAs(dir string) (*syscall.Credential, string, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return nil, "", err
		}
		return nil, u.Username, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, "", fmt.Errorf("pgtest: running as root needs the postgres system user (Debian's postgresql package makes it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, "", err
	}
	// The server must reach its directory through every parent.
	for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
			return nil, "", fmt.Errorf("pgtest: %s is not searchable by others; the postgres user cannot reach %s (set TMPDIR to a directory it can)", p, dir)
		}
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, "postgres", nil
}

// waitReady waits until the server accepts connections.
func (s *Server) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	addr := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	for time.Now().Before(deadline) {
		if s.cmd.ProcessState != nil {
			return fmt.Errorf("postgres exited")
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			// The port opens before recovery ends; pg_isready would say, but a
			// short settle is what the protocol's startup answers anyway.
			return s.ping(deadline)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("postgres not ready on %s after %s", addr, d)
}

func (s *Server) ping(deadline time.Time) error {
	bin, _ := binDir()
	for time.Now().Before(deadline) {
		cmd := exec.Command(filepath.Join(bin, "pg_isready"), "-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", s.User)
		if cmd.Run() == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("pg_isready never answered")
}

// Stop shuts the server down fast (SIGINT: PostgreSQL's fast shutdown).
func (s *Server) stop() {
	if s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	g := task.NewGroup(context.Background())
	defer g.Stop()
	g.Go(func(context.Context) { _ = s.cmd.Wait(); close(done) })
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Kill stops the server at once (SIGKILL), as a crash.
func (s *Server) Kill() { _ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) }

// Exec runs SQL through psql as the superuser (for test setup).
func (s *Server) Exec(ctx context.Context, database, sql string) (string, error) {
	bin, _ := binDir()
	psql := filepath.Join(bin, "psql")
	if _, err := os.Stat(psql); err != nil {
		if p, err := exec.LookPath("psql"); err == nil {
			psql = p
		}
	}
	cmd := exec.CommandContext(ctx, psql, "-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", s.User, "-d", database, "-v", "ON_ERROR_STOP=1", "-Atc", sql)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("psql: %w: %s", err, out)
	}
	return string(out), nil
}
