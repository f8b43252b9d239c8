package scanner

import (
	"bufio"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// moduleReplies reads the RedisBloom replies captured from the module (testdata/redisbloom),
// decoded as go-redis hands them to Do's caller: by name and protocol ("both" is either).
func moduleReplies(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("testdata/redisbloom/replies.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || strings.HasPrefix(line, "#") {
			continue
		}
		wire := strings.NewReplacer(`\r\n`, "\r\n").Replace(f[2])
		v, err := decodeRESP(bufio.NewReader(strings.NewReader(wire)))
		if err != nil {
			t.Fatalf("%s: %v", f[0], err)
		}
		out[f[0]+" "+f[1]] = v
	}
	return out
}

// decodeRESP decodes one reply as go-redis does: a simple or bulk string a string, an integer an
// int64, a null nil, an array []any, a map map[any]any, an error an error.
func decodeRESP(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return respError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '_':
		return nil, nil
	case '$':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*', '%':
		n, _ := strconv.Atoi(body)
		items := make([]any, 0, n)
		for range n * map[bool]int{true: 2, false: 1}[line[0] == '%'] {
			v, err := decodeRESP(r)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		if line[0] == '*' {
			return items, nil
		}
		m := map[any]any{}
		for i := 0; i < len(items); i += 2 {
			m[items[i]] = items[i+1]
		}
		return m, nil
	}
	return nil, respError("unknown reply " + line)
}

type respError string

func (e respError) Error() string { return string(e) }

// TestModuleRepliesCaptured reads BF.INFO and BF.DEBUG as RedisBloom answered them, in RESP2
// and RESP3, and checks each figure against what was asked of the module and measured of it.
func TestModuleRepliesCaptured(t *testing.T) {
	replies := moduleReplies(t)
	for _, c := range []struct {
		f                     string
		capacity, added, size int64
		filters, expansion    int
		target, fpLow, fpHigh float64
	}{
		// f1: 10,000 items never added, 70 answered 1: its rate 0.70% ± 0.17% (2σ).
		{"f1", 1000, 2989, 4664, 2, 2, 0.01, 0.0053, 0.0087},
		{"f2", 100, 100, 280, 1, 0, 0.001, 0, 0.001},
		{"f3", 200, 973, 1264, 2, 4, 0.05, 0, 0.05},
	} {
		for _, proto := range []string{"RESP2", "RESP3"} {
			info, err := parseBFInfo(replies["BF_INFO_"+c.f+" "+proto])
			if err != nil {
				t.Fatalf("%s %s: %v", c.f, proto, err)
			}
			parts, err := parseBFDebug(replies["BF_DEBUG_"+c.f+" both"])
			if err != nil || len(parts) != c.filters {
				t.Fatalf("%s: BF.DEBUG %+v, %v", c.f, parts, err)
			}
			var bf, bare snapshot.BloomFilter
			moduleFigures(&bf, info, parts)
			moduleFigures(&bare, info, nil)
			if *bf.Capacity != c.capacity || *bare.Capacity != c.capacity || *bf.Added != c.added || *bf.MemoryBytes != c.size ||
				*bf.SubFilters != c.filters || *bf.Expansion != c.expansion {
				t.Errorf("%s %s: %+v (without BF.DEBUG %+v)", c.f, proto, bf, bare)
			}
			if bf.TargetRate == nil || math.Abs(*bf.TargetRate-c.target) > 1e-12 {
				t.Errorf("%s: target %v, BF.RESERVE's %v", c.f, bf.TargetRate, c.target)
			}
			if p := bf.FalsePositive; p == nil || p.From != "items" || p.Value < c.fpLow || p.Value > c.fpHigh || bf.OverTarget {
				t.Errorf("%s: false-positive rate %+v, want %v..%v and not over target", c.f, p, c.fpLow, c.fpHigh)
			}
			if bf.Elements != nil || bare.FalsePositive != nil || bare.Fill != nil || bare.TargetRate != nil || len(bare.Notes) == 0 {
				t.Errorf("%s: a figure the module does not give is known: %+v / %+v", c.f, bf, bare)
			}
		}
	}
	for _, name := range []string{"BF_INFO_nosuchkey both", "BF_INFO_s1 both"} {
		if _, ok := replies[name].(error); !ok {
			t.Errorf("%s: %v, want an error", name, replies[name])
		}
	}
}
