package cli

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// openPTY opens a pseudo-terminal and returns its controlling side and the terminal side.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var n, unlock uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlockpt: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("ptsname: %v", e)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tty.Close(); _ = ptmx.Close() })
	return ptmx, tty
}

var progressEnd = regexp.MustCompile(` keys seen, [0-9,]+ unclaimed in \d+ groups?, \d+s\x1b\[K\r\x1b\[K$`)

// TestDiscoverProgressOnTerminal: with standard error on a terminal, the sweep's progress is
// drawn there, on one line redrawn in place and cleared at the end; standard output holds only
// the config.
func TestDiscoverProgressOnTerminal(t *testing.T) {
	srv := redistest.Start(t)
	variedKeyspace(t, srv.Client(t))
	ptmx, tty := openPTY(t)
	read := make(chan string, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			b.Write(buf[:n])
			if err != nil || strings.Contains(b.String(), "\r\x1b[K") {
				read <- b.String()
				return
			}
		}
	}()
	// 10 keys a page at 200 keys a second: the sweep of 300 keys spans a few looks at it.
	conn := writeConfig(t, "slow.toml", fmt.Sprintf("[redis]\naddrs = [%q]\n[scan]\ncount = 10\nkeys_per_second = 200\n", srv.Addr))
	var out syncBuffer
	code := Run(t.Context(), redistest.Shipped(t), []string{"discover", "--config", conn}, &out, tty)
	tty.Close() // the reader ends at the last line's clearing, or here
	shown := <-read
	if code != exitOK || !strings.HasPrefix(shown, "\rdiscover: sweeping "+srv.Addr+": ") || !progressEnd.MatchString(shown) {
		t.Errorf("exit %d; the terminal showed %q", code, shown)
	}
	if strings.Contains(out.String(), "sweeping") || !strings.HasPrefix(out.String(), "# hourglass discover") {
		t.Errorf("progress reached standard output:\n%s", out.String())
	}
}
