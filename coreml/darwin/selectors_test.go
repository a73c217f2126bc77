package darwin

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/orchard-llm/orchard/internal/crosscheck"
)

// objc.Call sends any selector with any arguments (params ...any), so the
// compiler cannot check what goes through it. checkSelectors does: every
// selector must be one reviewed against Apple's headers, take as many
// arguments as it has colons, and receive and return Go types that darwinkit
// marshals to the declared Objective-C types.

// selectorSig is the Go side of one Objective-C method as called through
// objc.Call. Types are written as types.TypeString prints them with package
// names; "handle" is any objc.Handle, "nil" an untyped nil (a NULL block),
// "void" objc.Void.
type selectorSig struct {
	decl string // the Objective-C declaration, for the reviewer
	ret  string
	args []string
}

// knownSelectors lists the selectors the darwin backend may send.
func knownSelectors() map[string]selectorSig {
	return map[string]selectorSig{
		"count":           {"-[NSArray count] (NSUInteger)", "int", nil},
		"objectAtIndex:":  {"-[NSArray objectAtIndex:(NSUInteger)]", "handle", []string{"int"}},
		"shape":           {"-[MLMultiArray shape] / -[MLMultiArrayConstraint shape] (NSArray<NSNumber*>*)", "handle", nil},
		"strides":         {"-[MLMultiArray strides] (NSArray<NSNumber*>*)", "handle", nil},
		"dataPointer":     {"-[MLMultiArray dataPointer] (void*)", "unsafe.Pointer", nil},
		"dataType":        {"-[MLStateConstraint dataType] (MLMultiArrayDataType, NSInteger)", "coreml.MultiArrayDataType", nil},
		"bufferShape":     {"-[MLStateConstraint bufferShape] (NSArray<NSNumber*>*), macOS 15", "handle", nil},
		"stateConstraint": {"-[MLFeatureDescription stateConstraint] (MLStateConstraint*), macOS 15", "handle", nil},
		"stateDescriptionsByName": {"-[MLModelDescription stateDescriptionsByName] (NSDictionary<NSString*, MLFeatureDescription*>*), macOS 15",
			"map[string]coreml.FeatureDescription", nil},
		"sizeRangeForDimension": {"-[MLMultiArrayShapeConstraint sizeRangeForDimension] (NSArray<NSValue*>*)", "handle", nil},
		"enumeratedShapes":      {"-[MLMultiArrayShapeConstraint enumeratedShapes] (NSArray<NSArray<NSNumber*>*>*)", "handle", nil},
		"setFunctionName:":      {"-[MLModelConfiguration setFunctionName:(NSString*)], macOS 15", "void", []string{"string"}},
		"newState":              {"-[MLModel newState] (MLState*, owned), macOS 15", "handle", nil},
		"predictionFromFeatures:usingState:options:error:": {
			"-[MLModel predictionFromFeatures:(id<MLFeatureProvider>) usingState:(MLState*) options:(MLPredictionOptions*) error:(NSError**)], macOS 15",
			"handle", []string{"handle", "handle", "handle", "unsafe.Pointer"}},
		"getMultiArrayForStateNamed:handler:": {
			"-[MLState getMultiArrayForStateNamed:(NSString*) handler:(void (^)(MLMultiArray*))], macOS 15",
			"void", []string{"string", "func(coreml.MultiArray)"}},
		"getBytesWithHandler:": {
			"-[MLMultiArray getBytesWithHandler:(void (^)(const void *bytes, NSInteger size))], macOS 12.3",
			"void", []string{"func(unsafe.Pointer, int)"}},
		"getMutableBytesWithHandler:": {
			"-[MLMultiArray getMutableBytesWithHandler:(void (^)(void *bytes, NSInteger size, NSArray<NSNumber*> *strides))], macOS 12.3",
			"void", []string{"func(unsafe.Pointer, int, []foundation.Number)"}},
		"initWithDataPointer:shape:dataType:strides:deallocator:error:": {
			"-[MLMultiArray initWithDataPointer:(void*) shape:(NSArray<NSNumber*>*) dataType:(MLMultiArrayDataType) strides:(NSArray<NSNumber*>*) deallocator:(void (^)(void*)) error:(NSError**)]",
			"coreml.MultiArray", []string{"unsafe.Pointer", "[]foundation.Number", "coreml.MultiArrayDataType", "[]foundation.Number", "nil", "unsafe.Pointer"}},
		"compileModelAtURL:completionHandler:": {
			"+[MLModel compileModelAtURL:(NSURL*) completionHandler:(void (^)(NSURL*, NSError*))], macOS 13",
			"void", []string{"handle", "func(foundation.URL, foundation.Error)"}},
		"modelAssetWithURL:error:": {
			"+[MLModelAsset modelAssetWithURL:(NSURL*) error:(NSError**)], macOS 15",
			"handle", []string{"handle", "unsafe.Pointer"}},
		"functionNamesWithCompletionHandler:": {
			"-[MLModelAsset functionNamesWithCompletionHandler:(void (^)(NSArray<NSString*>*, NSError*))], macOS 15",
			"void", []string{"func(objc.Object, foundation.Error)"}},
		"description": {"-[NSObject description] (NSString*, read as a Go string)", "string", nil},
		"compileModelAtURL:error:": {
			"+[MLModel compileModelAtURL:(NSURL*) error:(NSError**)]",
			"foundation.URL", []string{"handle", "unsafe.Pointer"}},
	}
}

const objcPath = "github.com/progrium/darwinkit/objc"

// checkSelectors returns one message per misuse of objc.Sel or objc.Call in
// the matched packages of res.
func checkSelectors(res *crosscheck.Result, known map[string]selectorSig) []string {
	var problems []string
	seen := make(map[string]bool)
	report := func(pos token.Pos, format string, args ...any) {
		msg := fmt.Sprintf("%s: %s", res.Fset.Position(pos), fmt.Sprintf(format, args...))
		if !seen[msg] { // test variants repeat the package's files
			seen[msg] = true
			problems = append(problems, msg)
		}
	}
	for _, p := range res.Packages {
		vars := selectorVars(p.Info, p.Files)
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch objcFunc(p.Info, call.Fun) {
				case "Sel":
					if name, ok := constString(p.Info, call.Args[0]); !ok {
						report(call.Pos(), "objc.Sel with a name that is not a constant")
					} else if _, ok := known[name]; !ok {
						report(call.Pos(), "selector %q is not one reviewed against Apple's headers (knownSelectors)", name)
					}
				case "Call":
					checkCall(p.Info, vars, call, known, report)
				}
				return true
			})
		}
	}
	return problems
}

// selectorVars finds the variables set once, at their declaration, to
// objc.Sel(constant) (sel := objc.Sel("newState")), with their selectors.
func selectorVars(info *types.Info, files []*ast.File) map[types.Object]string {
	vars := make(map[types.Object]string)
	assigned := make(map[types.Object]int)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok {
				return true
			}
			for i, lhs := range as.Lhs {
				id, ok := lhs.(*ast.Ident)
				if !ok {
					continue
				}
				obj := info.Defs[id]
				if obj == nil {
					obj = info.Uses[id]
				}
				if obj == nil {
					continue
				}
				assigned[obj]++
				if as.Tok != token.DEFINE || len(as.Rhs) != len(as.Lhs) {
					continue
				}
				if call, ok := as.Rhs[i].(*ast.CallExpr); ok && objcFunc(info, call.Fun) == "Sel" {
					if name, ok := constString(info, call.Args[0]); ok {
						vars[obj] = name
					}
				}
			}
			return true
		})
	}
	for obj := range vars {
		if assigned[obj] != 1 {
			delete(vars, obj)
		}
	}
	return vars
}

// selectorOf returns the constant selector e denotes: objc.Sel(constant), or
// a variable selectorVars found.
func selectorOf(info *types.Info, vars map[types.Object]string, e ast.Expr) (string, bool) {
	switch x := e.(type) {
	case *ast.CallExpr:
		if objcFunc(info, x.Fun) == "Sel" {
			return constString(info, x.Args[0])
		}
	case *ast.Ident:
		name, ok := vars[info.Uses[x]]
		return name, ok
	}
	return "", false
}

func checkCall(info *types.Info, vars map[types.Object]string, call *ast.CallExpr, known map[string]selectorSig, report func(token.Pos, string, ...any)) {
	if len(call.Args) < 2 {
		return
	}
	name, ok := selectorOf(info, vars, call.Args[1])
	if !ok {
		report(call.Args[1].Pos(), "objc.Call selector must be objc.Sel(constant), or a variable set once to one, to be checked")
		return
	}
	sig, ok := known[name]
	if !ok {
		return // reported with the objc.Sel call
	}
	if call.Ellipsis.IsValid() {
		report(call.Pos(), "objc.Call of %q with spread arguments cannot be checked", name)
		return
	}
	args := call.Args[2:]
	if want := strings.Count(name, ":"); len(args) != want {
		report(call.Pos(), "selector %q takes %d arguments, objc.Call passes %d", name, want, len(args))
		return
	}
	handle := handleInterface(info, call.Fun)
	for i, a := range args {
		if got := argType(info, a); !typeMatches(got, sig.args[i], handle) {
			report(a.Pos(), "argument %d of %q: %s, want %s (%s)", i+1, name, describeType(got), sig.args[i], sig.decl)
		}
	}
	if fsig, ok := info.Types[call.Fun].Type.(*types.Signature); ok && fsig.Results().Len() == 1 {
		if got := fsig.Results().At(0).Type(); !typeMatches(got, sig.ret, handle) {
			report(call.Pos(), "objc.Call[%s] of %q: want result %s (%s)", describeType(got), name, sig.ret, sig.decl)
		}
	}
}

// objcFunc returns the name of the darwinkit objc function fun refers to
// (through a generic instantiation), or "".
func objcFunc(info *types.Info, fun ast.Expr) string {
	switch x := fun.(type) {
	case *ast.IndexExpr:
		fun = x.X
	case *ast.IndexListExpr:
		fun = x.X
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != objcPath {
		return ""
	}
	return fn.Name()
}

// handleInterface finds objc.Handle through the package of fun's function.
func handleInterface(info *types.Info, fun ast.Expr) *types.Interface {
	if x, ok := fun.(*ast.IndexExpr); ok {
		fun = x.X
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	obj := info.Uses[sel.Sel]
	if obj == nil || obj.Pkg() == nil {
		return nil
	}
	h, ok := obj.Pkg().Scope().Lookup("Handle").(*types.TypeName)
	if !ok {
		return nil
	}
	iface, _ := h.Type().Underlying().(*types.Interface)
	return iface
}

func constString(info *types.Info, e ast.Expr) (string, bool) {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil {
		return "", false
	}
	s := tv.Value.ExactString()
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	return strings.Trim(s, `"`), true
}

// argType is the type an argument has once it is boxed in an interface;
// nil stands for an untyped nil.
func argType(info *types.Info, e ast.Expr) types.Type {
	tv := info.Types[e]
	if tv.IsNil() || tv.Type == nil {
		return nil
	}
	return types.Default(tv.Type)
}

func typeMatches(t types.Type, want string, handle *types.Interface) bool {
	switch want {
	case "nil":
		return t == nil
	case "handle":
		return t != nil && handle != nil && types.Implements(t, handle)
	case "void":
		return t != nil && describeType(t) == "objc.Void"
	}
	return t != nil && describeType(t) == want
}

// describeType prints t with package names, and function types without
// parameter names.
func describeType(t types.Type) string {
	if t == nil {
		return "nil"
	}
	qual := func(p *types.Package) string { return p.Name() }
	sig, ok := t.(*types.Signature)
	if !ok {
		return types.TypeString(t, qual)
	}
	var ps []string
	for v := range sig.Params().Variables() {
		ps = append(ps, types.TypeString(v.Type(), qual))
	}
	s := "func(" + strings.Join(ps, ", ") + ")"
	switch r := sig.Results(); r.Len() {
	case 0:
	case 1:
		s += " " + types.TypeString(r.At(0).Type(), qual)
	default:
		var rs []string
		for v := range r.Variables() {
			rs = append(rs, types.TypeString(v.Type(), qual))
		}
		s += " (" + strings.Join(rs, ", ") + ")"
	}
	return s
}

// cgoStdNames are the C names from system headers the darwin files use.
func cgoStdNames() []string {
	return []string{"free", "malloc", "size_t", "int", "char", "CString", "GoString", "GoBytes"}
}
