package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// sourceIndex holds what reflection cannot see of the API types: the
// comments of types, fields and constants (descriptions and +markers),
// and the values of constants (enums, +default=ref(...)). It reads the
// source of the packages from the module cache, as openapi-gen does.
type sourceIndex struct {
	pkgs map[string]*sourcePackage
}

// sourcePackage is the parsed source of one Go package.
type sourcePackage struct {
	path string
	// types maps a type name to its comment lines.
	types map[string][]string
	// fields maps a struct type name to its fields' comment lines, by
	// field name (the type's name for an embedded field).
	fields map[string]map[string][]string
	// consts maps a constant name to its declaration.
	consts map[string]*constant
}

// constant is a constant declaration. typ names its declared type as
// "pkgpath.Name" ("" when untyped); expr is its value expression, which
// eval reduces to a literal when it is one, a conversion of one, or
// another constant.
type constant struct {
	name     string
	typ      string
	comments []string
	expr     ast.Expr
	pkg      *sourcePackage
	imports  map[string]string
}

// loadSources parses the non-test Go files of the packages.
func loadSources(pkgPaths []string) (*sourceIndex, error) {
	dirs, err := packageDirs(pkgPaths)
	if err != nil {
		return nil, err
	}
	idx := &sourceIndex{pkgs: map[string]*sourcePackage{}}
	for _, p := range pkgPaths {
		sp, err := parsePackage(p, dirs[p])
		if err != nil {
			return nil, err
		}
		idx.pkgs[p] = sp
	}
	return idx, nil
}

// packageDirs asks the go command where each package's source is (the
// module cache, for k8s.io/api and k8s.io/apimachinery).
func packageDirs(pkgPaths []string) (map[string]string, error) {
	args := append([]string{"list", "-f", "{{.ImportPath}} {{.Dir}}"}, pkgPaths...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.String())
	}
	dirs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, ok := strings.Cut(line, " ")
		if ok {
			dirs[path] = dir
		}
	}
	for _, p := range pkgPaths {
		if dirs[p] == "" {
			return nil, fmt.Errorf("go list: no directory for %s", p)
		}
	}
	return dirs, nil
}

func parsePackage(path, dir string) (*sourcePackage, error) {
	sp := &sourcePackage{
		path:   path,
		types:  map[string][]string{},
		fields: map[string]map[string][]string{},
		consts: map[string]*constant{},
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	fset := token.NewFileSet()
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		sp.addFile(fset, f)
	}
	return sp, nil
}

// addFile records the declarations of f. A declaration's comment lines
// are those of the comment group that ends on the line just above it,
// as gengo (openapi-gen's parser) finds them.
func (sp *sourcePackage) addFile(fset *token.FileSet, f *ast.File) {
	endLines := map[int]*ast.CommentGroup{}
	for _, c := range f.Comments {
		endLines[fset.Position(c.End()).Line] = c
	}
	commentsAbove := func(pos token.Pos) []string {
		return splitLines(endLines[fset.Position(pos).Line-1].Text())
	}
	imports := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
	}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				sp.types[s.Name.Name] = commentsAbove(s.Name.Pos())
				if st, ok := s.Type.(*ast.StructType); ok {
					sp.fields[s.Name.Name] = structFieldComments(st, commentsAbove)
				}
			case *ast.ValueSpec:
				if gd.Tok != token.CONST {
					continue
				}
				for i, n := range s.Names {
					c := &constant{name: n.Name, comments: commentsAbove(n.Pos()), pkg: sp, imports: imports}
					if i < len(s.Values) {
						c.expr = s.Values[i]
					}
					switch call, ok := c.expr.(*ast.CallExpr); {
					case s.Type != nil:
						c.typ = qualifiedName(s.Type, sp.path, imports)
					case ok && len(call.Args) == 1:
						// Typed by a conversion: PathTypeExact = PathType("Exact").
						c.typ = qualifiedName(call.Fun, sp.path, imports)
					}
					sp.consts[n.Name] = c
				}
			}
		}
	}
}

func structFieldComments(st *ast.StructType, commentsAbove func(token.Pos) []string) map[string][]string {
	fields := map[string][]string{}
	for _, f := range st.Fields.List {
		lines := commentsAbove(f.Pos())
		if len(f.Names) == 0 {
			fields[embeddedName(f.Type)] = lines
			continue
		}
		for _, n := range f.Names {
			fields[n.Name] = lines
		}
	}
	return fields
}

func embeddedName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return embeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// qualifiedName is "pkgpath.Name" for a type or constant reference.
func qualifiedName(e ast.Expr, pkg string, imports map[string]string) string {
	switch t := e.(type) {
	case *ast.Ident:
		return pkg + "." + t.Name
	case *ast.SelectorExpr:
		if x, ok := t.X.(*ast.Ident); ok {
			return imports[x.Name] + "." + t.Sel.Name
		}
	}
	return ""
}

// splitLines splits comment text into lines, as gengo does.
func splitLines(s string) []string {
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// typeComments returns the comment lines of pkg.name.
func (idx *sourceIndex) typeComments(pkg, name string) []string {
	if sp := idx.pkgs[pkg]; sp != nil {
		return sp.types[name]
	}
	return nil
}

// fieldComments returns the comment lines of a field of pkg.typeName.
func (idx *sourceIndex) fieldComments(pkg, typeName, field string) []string {
	if sp := idx.pkgs[pkg]; sp != nil {
		return sp.fields[typeName][field]
	}
	return nil
}

// constValue returns the value of the constant pkg.name: a string, an
// int64, or an error when it is neither a literal nor another constant.
func (idx *sourceIndex) constValue(pkg, name string) (interface{}, error) {
	sp := idx.pkgs[pkg]
	if sp == nil {
		return nil, fmt.Errorf("constant %s.%s: package not loaded", pkg, name)
	}
	c := sp.consts[name]
	if c == nil {
		return nil, fmt.Errorf("constant %s.%s not found", pkg, name)
	}
	return idx.eval(c.expr, c.pkg.path, c.imports)
}

func (idx *sourceIndex) eval(e ast.Expr, pkg string, imports map[string]string) (interface{}, error) {
	switch v := e.(type) {
	case *ast.BasicLit:
		switch v.Kind {
		case token.STRING:
			return strconv.Unquote(v.Value)
		case token.INT:
			return strconv.ParseInt(v.Value, 0, 64)
		}
	case *ast.ParenExpr:
		return idx.eval(v.X, pkg, imports)
	case *ast.CallExpr: // a conversion: Type("value")
		if len(v.Args) == 1 {
			return idx.eval(v.Args[0], pkg, imports)
		}
	case *ast.Ident, *ast.SelectorExpr:
		q := qualifiedName(v, pkg, imports)
		i := strings.LastIndex(q, ".")
		return idx.constValue(q[:i], q[i+1:])
	}
	return nil, fmt.Errorf("cannot evaluate constant expression %T in %s", e, pkg)
}

// enumValues returns the string constants declared with type pkg.name,
// in every loaded package.
func (idx *sourceIndex) enumValues(pkg, name string) []*constant {
	want := pkg + "." + name
	var out []*constant
	paths := make([]string, 0, len(idx.pkgs))
	for p := range idx.pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		sp := idx.pkgs[p]
		names := make([]string, 0, len(sp.consts))
		for n := range sp.consts {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if c := sp.consts[n]; c.typ == want {
				out = append(out, c)
			}
		}
	}
	return out
}
