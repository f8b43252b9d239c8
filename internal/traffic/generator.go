package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hourglass-dev/hourglass/store"
)

// Generator draws dims tuples for a counter family the way real traffic hits them: a few tuples
// take most events (Zipf, s = 1.1), a long tail takes the rest.
type Generator struct {
	family *store.Family
	tuples [][]string
	zipf   *rand.Zipf
}

// MaxDims is the most distinct dims tuples a generator draws over: a million tuples of three
// dims hold about 120 MB, all drawn before the first event.
const MaxDims = 1_000_000

// NewGenerator prepares k distinct dims tuples for f (1 to MaxDims), seeded so runs are
// repeatable.
func NewGenerator(f *store.Family, k int, seed uint64) *Generator {
	g, _ := NewGeneratorContext(context.Background(), f, k, seed)
	return g
}

// NewGeneratorContext is NewGenerator, stopping with ctx's error when ctx ends while the tuples
// are drawn.
func NewGeneratorContext(ctx context.Context, f *store.Family, k int, seed uint64) (*Generator, error) {
	k = min(max(k, 1), MaxDims)
	names := f.Dims()
	tuples := make([][]string, k)
	for i := range tuples {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		tuple := make([]string, len(names))
		for j, name := range names {
			tuple[j] = dimValue(name, i)
		}
		tuples[i] = tuple
	}
	r := rand.New(rand.NewPCG(seed, uint64(k)))
	return &Generator{family: f, tuples: tuples, zipf: rand.NewZipf(r, 1.1, 1, uint64(k-1))}, nil
}

// Next returns the dims of the next event. The slice is shared: do not modify it.
func (t *Generator) Next() []string { return t.tuples[t.zipf.Uint64()] }

// Family is the family the generator draws for.
func (t *Generator) Family() *store.Family { return t.family }

// Tuples are every dims tuple the generator draws from. Shared: do not modify them.
func (t *Generator) Tuples() [][]string { return t.tuples }

// dimValue makes the i-th value of a placeholder look like what it names.
func dimValue(name string, i int) string {
	switch n := strings.ToLower(name); {
	case n == "ip" || strings.HasSuffix(n, "_ip"):
		return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	case strings.Contains(n, "device"):
		return fmt.Sprintf("dev%06d", i)
	default:
		return fmt.Sprintf("%s%d", n, i)
	}
}
