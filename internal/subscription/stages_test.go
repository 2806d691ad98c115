package subscription

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The stage list is written three times: in the code (sync, turn, run and
// write call the stages in order), in pass.go's header and in
// docs/architecture.md's diagram. TestStageListsMatchTheCode reads all
// three and fails when they disagree, so that the map stays the code.

// stageCalls are the functions that are stages, by the name the lists
// give them; stepCalls those that only call stages in turn.
var (
	stageCalls = map[string]string{"begin": "begin", "turn": "turn", "checkAccount": "account", "move": "move",
		"fetch": "fetch", "parse": "parse", "load": "load", "render": "render", "reconcile": "reconcile",
		"migrate": "migrate", "shape": "shape", "plan": "plan", "guard": "guard", "follow": "guard",
		"apply": "apply", "vacate": "vacate", "settle": "settle"}
	stepCalls = map[string]bool{"sync": true, "turn": true, "run": true, "read": true, "write": true, "plan": true}
)

// codeStages are the stages as sync calls them, in source order.
func codeStages(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]*ast.FuncDecl{}
	for _, f := range pkgs["subscription"].Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && (fd.Recv == nil || recvIs(fd, "Runner", "pass")) {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	var out []string
	var walk func(name string)
	walk = func(name string) {
		fd := funcs[name]
		if fd == nil {
			t.Fatalf("no function %s", name)
		}
		visit(fd.Body, func(callee string) {
			if _, ok := funcs[callee]; !ok {
				return
			}
			if stage, ok := stageCalls[callee]; ok && (len(out) == 0 || out[len(out)-1] != stage) {
				out = append(out, stage)
			}
			if stepCalls[callee] && callee != name {
				walk(callee)
			}
		})
	}
	walk("sync")
	return out
}

// visit calls call with the name of each function n calls, in the order
// they run: a call's arguments before the call.
func visit(n ast.Node, call func(callee string)) {
	ast.Inspect(n, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		for _, a := range c.Args {
			visit(a, call)
		}
		switch fn := c.Fun.(type) {
		case *ast.Ident:
			call(fn.Name)
		case *ast.SelectorExpr:
			visit(fn.X, call)
			if id, ok := fn.X.(*ast.Ident); ok && (id.Name == "r" || id.Name == "p") {
				call(fn.Sel.Name)
			}
		}
		return false
	})
}

func recvIs(fd *ast.FuncDecl, names ...string) bool {
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	id, ok := t.(*ast.Ident)
	return ok && slices.Contains(names, id.Name)
}

// listedStages are the first words of the lines of a stage list.
func listedStages(text string, line *regexp.Regexp) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

func TestStageListsMatchTheCode(t *testing.T) {
	code := codeStages(t)
	if len(code) < 10 {
		t.Fatalf("found only %v in the code: the reader is broken", code)
	}
	src, err := os.ReadFile("pass.go")
	if err != nil {
		t.Fatal(err)
	}
	header := string(src[:strings.Index(string(src), "import (")])
	if got := listedStages(header, regexp.MustCompile(`^//\t([a-z]+)\s`)); !slices.Equal(got, code) {
		t.Errorf("pass.go's header lists the stages\n\t%v\nthe code calls them\n\t%v", got, code)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	d := string(doc)
	start := strings.Index(d, "## One pass")
	block := d[start:]
	block = block[strings.Index(block, "```\n")+4:]
	block = block[:strings.Index(block, "```")]
	if got := listedStages(block, regexp.MustCompile(`^ (?:[│┌]─?►?\s{1,3})?([a-z]+)\s\s`)); !slices.Equal(got, code) {
		t.Errorf("docs/architecture.md's diagram lists the stages\n\t%v\nthe code calls them\n\t%v", got, code)
	}
}
