package main

// The tests in this file keep the code's shape: which package may import which, that every
// package says what it is for, and that no file or function grows past a size a reader can hold.
// They read the module through `go list -json ./...`, so they see exactly what the build sees.

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// module is the module path; an import of it or of a path under it is one of ours.
const module = "github.com/hourglass-dev/hourglass"

// importRule is what one package may import. may lists the packages of ours it may import
// directly, as paths under the module ("store", "internal/format"); anyOurs lets it import every
// package of ours. mustNot lists imports it must not have, of any module, each for the reason
// given in why.
type importRule struct {
	pkg     string
	may     []string
	anyOurs bool
	mustNot []string
	why     string
}

const (
	goRedis   = "github.com/redis/go-redis/v9"
	miniredis = "github.com/alicebob/miniredis/v2"
	asynq     = "github.com/hibiken/asynq"
	protowire = "google.golang.org/protobuf/encoding/protowire"
)

// importRules is the import graph of the module, one line per package. A new package must be
// added here with its rule before TestImportRules passes. Only direct, non-test imports count.
var importRules = []importRule{
	{pkg: module, may: []string{"internal/cli"},
		why: "main only wires signals and exit codes; the commands live in internal/cli"},
	{pkg: module + "/store", may: nil,
		mustNot: []string{asynq, protowire},
		why:     "store is the bottom layer: how services count in Redis; what only the job side needs stays out of it"},
	{pkg: module + "/store/jobs", may: []string{"store"},
		why: "other programs' job queues and our own queues as the console reads and acts on them, on store's keys and scripts"},
	{pkg: module + "/store/limits", may: []string{"store"},
		why: "other libraries' limiter layouts, read beside store's own limiter"},
	{pkg: module + "/scanner", may: []string{"store", "store/jobs", "store/limits", "snapshot", "internal/discover", "internal/estimate", "internal/format"},
		mustNot: []string{module + "/internal/watch"},
		why:     "the engine: a sweep reads what store writes into a Snapshot, and hands the keys nothing claims to discover; the Watcher that repeats it is above it"},
	{pkg: module + "/internal/watch", may: []string{"internal/estimate", "internal/format", "scanner", "snapshot", "store", "store/jobs"},
		why: "the Watcher keeps a Snapshot current by stepping the scanner's sweeps, and reads live figures between them"},
	{pkg: module + "/snapshot", may: []string{"store", "store/jobs", "internal/discover", "internal/estimate"},
		mustNot: []string{goRedis},
		why:     "the data the front ends read: no Redis client, no I/O"},
	{pkg: module + "/internal/discover", may: []string{"store", "store/jobs", "store/limits", "internal/format", "internal/estimate"},
		mustNot: []string{goRedis},
		why:     "infers groups and kinds from names and samples the scanner reads; no Redis I/O"},
	{pkg: module + "/theme", may: nil,
		why: "styles and palettes only"},
	{pkg: module + "/internal/format", may: nil,
		why: "formatting for people, no I/O"},
	{pkg: module + "/internal/estimate", may: nil,
		mustNot: []string{goRedis},
		why:     "the statistics of part of a sweep; no I/O"},
	{pkg: module + "/tui", may: []string{"snapshot", "theme", "internal/cells", "internal/format", "internal/discover"},
		mustNot: []string{goRedis, miniredis, module + "/store", module + "/store/jobs", module + "/store/limits", module + "/scanner", module + "/internal/watch"},
		why:     "the views render a Snapshot and never do Redis I/O; console wires their Redis work"},
	{pkg: module + "/internal/config", may: []string{"store", "store/jobs", "store/limits", "scanner", "snapshot", "internal/format"},
		why: "the config builds store's families and the scanner's specs"},
	{pkg: module + "/internal/target", may: []string{"internal/config", "store"},
		why: "opens the Redis the config names"},
	{pkg: module + "/internal/traffic", may: []string{"internal/config", "scanner", "store", "store/limits"},
		why: "writes test traffic through the store"},
	{pkg: module + "/internal/cells", may: []string{"internal/format", "snapshot"},
		mustNot: []string{goRedis, module + "/scanner"},
		why:     "the text of the cells the console and the report both show; no I/O"},
	{pkg: module + "/internal/report", may: []string{"internal/cells", "internal/discover", "internal/format", "snapshot", "store"},
		mustNot: []string{goRedis, module + "/scanner"},
		why:     "renders a Snapshot as text and talks to no Redis"},
	{pkg: module + "/internal/metrics", may: []string{"internal/format", "snapshot"},
		mustNot: []string{goRedis, module + "/scanner", module + "/internal/watch"},
		why:     "exports a Snapshot; the Watcher it polls does the Redis work"},
	{pkg: module + "/internal/bench", may: []string{"internal/config", "internal/format", "internal/redistest", "internal/report", "internal/watch", "scanner", "snapshot", "store"},
		why: "measures store, the scanner and the Watcher on servers started as the tests start them, and prints with report"},
	{pkg: module + "/internal/inspect", may: []string{"internal/format", "internal/journal", "internal/watch", "scanner", "snapshot", "store", "store/jobs", "store/limits"},
		why: "the drill-down reads one structure's keys within the Watcher's budget and writes one task or key, or a section in bulk, through the store"},
	{pkg: module + "/internal/journal", may: []string{"store/jobs"},
		mustNot: []string{goRedis},
		why:     "the file that undoes bulk actions; no Redis I/O"},
	{pkg: module + "/internal/infer", may: []string{"internal/config", "internal/discover", "internal/format", "scanner", "store", "store/jobs"},
		mustNot: []string{goRedis},
		why:     "adopts discover's trusted entries as the config would read them; the scanner does the Redis work"},
	{pkg: module + "/internal/console", may: []string{"internal/config", "internal/discover", "internal/format", "internal/infer", "internal/inspect", "internal/target", "internal/traffic", "internal/watch", "scanner", "snapshot", "store", "theme", "tui"},
		why: "wires the views to the Watcher and the writes, and adds discover's entries to the session"},
	{pkg: module + "/internal/cli", anyOurs: true,
		why: "the command line hands over to every other package"},
	{pkg: module + "/internal/redistest", may: nil,
		why: "test helpers that start real Redis servers"},
}

// listedPackage is the part of `go list -json` these tests read.
type listedPackage struct {
	ImportPath string
	Dir        string
	Doc        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
}

var goList = sync.OnceValues(func() ([]listedPackage, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, errors.New("the go tool is not on PATH: " + err.Error())
	}
	cmd := exec.Command(goTool, "list", "-json", "./...")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, errors.New("go list -json ./...: " + err.Error() + "\n" + stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(&stdout)
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, errors.New("decoding go list -json: " + err.Error())
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, errors.New("go list -json ./... listed no packages")
	}
	return pkgs, nil
})

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	pkgs, err := goList()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func isOurs(path string) bool {
	return path == module || strings.HasPrefix(path, module+"/")
}

func TestImportRules(t *testing.T) {
	rules := make(map[string]importRule, len(importRules))
	for _, r := range importRules {
		if _, dup := rules[r.pkg]; dup {
			t.Errorf("%s has two rules in importRules", r.pkg)
		}
		rules[r.pkg] = r
	}
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		seen[p.ImportPath] = true
		r, ok := rules[p.ImportPath]
		if !ok {
			t.Errorf("%s has no import rule: add it to the table with its rule (importRules in layout_test.go)", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if slices.Contains(r.mustNot, imp) {
				t.Errorf("%s imports %s, which it must not: %s", p.ImportPath, imp, r.why)
				continue
			}
			if !isOurs(imp) || r.anyOurs {
				continue
			}
			if !slices.Contains(r.may, strings.TrimPrefix(imp, module+"/")) {
				t.Errorf("%s imports %s, not in its allow-list %v (%s)", p.ImportPath, imp, r.may, r.why)
			}
		}
	}
	for _, r := range importRules {
		if !seen[r.pkg] {
			t.Errorf("importRules has a rule for %s, which go list does not list: remove it", r.pkg)
		}
	}
}

// packageComment returns the package's doc comment in full (go list's Doc is only its first
// sentence), from whichever of its files carries it.
func packageComment(t *testing.T, p listedPackage) string {
	t.Helper()
	var docs []string
	fset := token.NewFileSet()
	for _, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			docs = append(docs, f.Doc.Text())
		}
	}
	return strings.Join(docs, "\n")
}

// importSentence is the sentence of a package comment that names the packages of ours it may
// import: "Of hourglass's packages it imports store and internal/discover.", "... it imports
// none." or, for the one package that may import all, "... it imports any.".
// The list ends at the first '.', ';', ':' or '(' after it.
var importSentence = regexp.MustCompile(`[Oo]f\s+hourglass's\s+packages\s+it\s+imports\s+([^.;:(]*)[.;:(]`)

// namedImports reads the packages an import sentence names, as paths under the module; all is
// set for "any".
func namedImports(list string) (names []string, all bool) {
	list = strings.Join(strings.Fields(list), " ") // the sentence may wrap across comment lines
	switch list {
	case "none":
		return nil, false
	case "any":
		return nil, true
	}
	for _, part := range strings.Split(strings.ReplaceAll(list, " and ", ", "), ",") {
		if part = strings.TrimSpace(part); part != "" {
			names = append(names, part)
		}
	}
	return names, false
}

// TestPackageComments: every package but main has a package comment whose import sentence names
// exactly the packages of ours its row in importRules allows, and the row allows exactly what
// the package imports, so neither the comment nor the table can drift from the code.
func TestPackageComments(t *testing.T) {
	rules := map[string]importRule{}
	for _, r := range importRules {
		rules[r.pkg] = r
	}
	for _, p := range listPackages(t) {
		if p.ImportPath == module {
			continue // main has its command doc, but nothing here requires it
		}
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("%s has no package comment: say what the package is for", p.ImportPath)
			continue
		}
		m := importSentence.FindAllStringSubmatch(packageComment(t, p), -1)
		if len(m) != 1 {
			t.Errorf("%s: its package comment should have one sentence %q naming the packages of ours it may import (it has %d)",
				p.ImportPath, "Of hourglass's packages it imports ... .", len(m))
			continue
		}
		named, all := namedImports(m[0][1])
		r := rules[p.ImportPath]
		if all != r.anyOurs || !sameSet(named, r.may) {
			t.Errorf("%s: its package comment names %q (any: %v); importRules allows %v (any: %v)", p.ImportPath, named, all, r.may, r.anyOurs)
		}
		if r.anyOurs {
			continue
		}
		var ours []string
		for _, imp := range p.Imports {
			if isOurs(imp) {
				ours = append(ours, strings.TrimPrefix(imp, module+"/"))
			}
		}
		for _, may := range r.may {
			if !slices.Contains(ours, may) {
				t.Errorf("%s: importRules allows %s, which it does not import: take it out of the row and the comment", p.ImportPath, may)
			}
		}
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

const (
	maxFileLines = 500
	maxFuncLines = 80
)

// sizeExceptions would list files exempt from the size limits, by path from the module root. It
// is for generated tables only, and there are none.
var sizeExceptions = []string{}

func TestFileAndFunctionSize(t *testing.T) {
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, p := range listPackages(t) {
		for _, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
			path := filepath.Join(p.Dir, name)
			rel, err := filepath.Rel(root, path)
			if err != nil {
				rel = path
			}
			rel = filepath.ToSlash(rel)
			if slices.Contains(sizeExceptions, rel) {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Count(src, []byte("\n"))
			if len(src) > 0 && src[len(src)-1] != '\n' {
				lines++
			}
			if lines > maxFileLines {
				t.Errorf("%s: %d lines, over the limit of %d: split it by concern", rel, lines, maxFileLines)
			}
			f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				var what string
				var body *ast.BlockStmt
				switch fn := n.(type) {
				case *ast.FuncDecl:
					what, body = "func "+funcName(fn), fn.Body
				case *ast.FuncLit:
					what, body = "func literal", fn.Body
				default:
					return true
				}
				if body == nil {
					return true // declared without a body (implemented elsewhere)
				}
				start, end := fset.Position(n.Pos()), fset.Position(body.Rbrace)
				if length := end.Line - start.Line + 1; length > maxFuncLines {
					t.Errorf("%s:%d: %s is %d lines, over the limit of %d", rel, start.Line, what, length, maxFuncLines)
				}
				return true
			})
		}
	}
}

// funcName names a declared function as a reader finds it: Name, or (Recv).Name for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	switch r := recv.(type) {
	case *ast.IndexExpr: // generic receiver T[P]
		recv = r.X
	case *ast.IndexListExpr:
		recv = r.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}
