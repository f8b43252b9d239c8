package redistest

import (
	"bufio"
	"net"
	"testing"
)

// StartErrorServer listens on a free loopback port and answers every command with an error
// reply, as a Redis that refuses everything (a broken proxy, a misconfigured ACL) would. It stops
// when the test ends and returns its address.
func StartErrorServer(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: error server: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					if _, err := readFrame(r); err != nil {
						return
					}
					if _, err := c.Write([]byte("-ERR refused by the test server\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}
