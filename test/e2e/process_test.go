package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is a program the test started, its output in a log file.
type process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
}

// startProcess starts bin with args, stdout and stderr to logFile.
func startProcess(name, logFile, bin string, args ...string) (*process, error) {
	return startProcessIn("", name, logFile, bin, args...)
}

// startProcessIn starts bin with args in the working directory dir (the
// test's when ""), stdout and stderr to logFile.
func startProcessIn(dir, name, logFile, bin string, args ...string) (*process, error) {
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, log: logFile, cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// exited says whether the process has ended, and how.
func (p *process) exited() (bool, string) {
	select {
	case <-p.done:
		return true, p.cmd.ProcessState.String()
	default:
		return false, ""
	}
}

// stop ends the process: SIGTERM, then SIGKILL after 20 s.
func (p *process) stop() { p.stopWithin(20 * time.Second) }

// stopWithin ends the process: SIGTERM, then SIGKILL after grace.
func (p *process) stopWithin(grace time.Duration) {
	if ended, _ := p.exited(); ended {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// logLines returns the lines of the process's log that match keep, and
// how many lines the log has.
func (p *process) logLines(keep func(string) bool) (lines []string, total int, err error) {
	f, err := os.Open(p.log)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 4<<20)
	for s.Scan() {
		total++
		if keep(s.Text()) {
			lines = append(lines, s.Text())
		}
	}
	return lines, total, s.Err()
}

// grep returns the lines of the log that match keep, or the error that
// kept it from reading them.
func (p *process) grep(keep func(string) bool) []string {
	lines, _, err := p.logLines(keep)
	if err != nil {
		return []string{fmt.Sprintf("(reading %s: %v)", p.log, err)}
	}
	return lines
}

// waitHealthy polls url (HTTPS, certificate not checked, the token as
// bearer when given) until it answers 200 "ok", for at most timeout.
func waitHealthy(ctx context.Context, p *process, url, token string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if p != nil {
			if ended, how := p.exited(); ended {
				return fmt.Errorf("%s exited (%s) before %s was healthy; its log ends:\n%s", p.name, how, url, tail(p, 30))
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			var body [64]byte
			n, _ := resp.Body.Read(body[:])
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body[:n])) == "ok" {
				return nil
			}
			last = fmt.Sprintf("%d %q", resp.StatusCode, body[:n])
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not healthy after %v (last answer: %s)", url, timeout, last)
}

// tail returns the last n lines of p's log, as one string.
func tail(p *process, n int) string {
	lines := p.grep(func(string) bool { return true })
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// freePort returns a loopback port free at the time of the call.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
