package engine

// Op names an engine command. It says which command a Failed, a
// Checkpoints, a History or a Branched event answers, and so routes a
// failure to the right words and a refused turn back into the input; it
// decides whether a command acts on the chat's conversation (chat). The
// values are the wire's (the server's events carry them as they are), so
// a new command gets a new constant, never a string at its call site.
type Op string

const (
	// Turns: their Failed undoes the turn on screen (Turn).
	OpSend       Op = "send"
	OpRegenerate Op = "regenerate"
	OpEdit       Op = "edit"
	OpContinue   Op = "continue" // Session.Continue (run --kv-restore)
	// ToolResults: the model turn goes on after its calls' results.
	OpToolResults Op = "tool-results"

	// The chat's conversation and settings.
	OpVersion  Op = "version" // SelectVersion
	OpSettings Op = "settings"
	OpClear    Op = "clear"
	OpTools    Op = "tools" // SetTools: the chat's tool declarations

	// What the model sees of the conversation (compact.go): ContextReport.Op.
	OpCompact Op = "compact" // Compact, and the policy's compaction before a turn
	OpPin     Op = "pin"
	OpSummary Op = "summary" // SetSummary
	OpElide   Op = "elide"   // ElideMedia
	OpContext Op = "context" // ContextView

	// Checkpoints (Checkpoints.Op, Failed.Op). Delete, rename and list
	// are also the History event's ops for the history's entries.
	OpSave     Op = "save"
	OpLoad     Op = "load"
	OpFork     Op = "fork"
	OpDelete   Op = "delete"
	OpRename   Op = "rename"
	OpList     Op = "list"
	OpAutosave Op = "autosave"

	// The history (History.Op, Failed.Op).
	OpHistory       Op = "history" // the history itself: connecting it, listing, keeping
	OpKept          Op = "kept"    // History: the conversation replaced was kept
	OpResume        Op = "resume"
	OpHistoryDelete Op = "history-delete"
	OpHistoryRename Op = "history-rename"

	// The engine's own plumbing.
	OpComplete Op = "complete" // an API request (Complete)
	OpKeep     Op = "keep"     // the request conversations' budgets
	OpStore    Op = "store"    // UseStore
	OpMark     Op = "mark"     // Mark

	// Front ends over a server (server.Client, the server's own waits).
	OpCancel  Op = "cancel"
	OpCommand Op = "command" // a command the server could not wait for
)

// chatOps are the commands that act on the chat's conversation: while an
// API request's conversation is in the session, the engine puts the
// chat's back first. The others (the store's list, delete and rename, the
// history's list, the budgets, marks) run on whatever the session holds.
var chatOps = map[Op]bool{
	OpSend: true, OpRegenerate: true, OpEdit: true, OpContinue: true, OpToolResults: true, OpTools: true,
	OpVersion: true, OpSettings: true, OpClear: true,
	OpCompact: true, OpPin: true, OpSummary: true, OpElide: true, OpContext: true,
	OpSave: true, OpLoad: true, OpFork: true, OpAutosave: true,
	OpResume: true, OpHistoryDelete: true, OpHistoryRename: true,
	OpDelete: false, OpRename: false, OpList: false, OpHistory: false,
	OpKeep: false, OpStore: false, OpMark: false,
}

// chat reports whether op acts on the chat's conversation. An op not in
// the table is one (the safe side: the chat's conversation is put back).
func (op Op) chat() bool {
	chat, ok := chatOps[op]
	return chat || !ok
}

// Turn reports whether op starts a chat turn: its Failed (or an unstarted
// Cancelled) means the message never made it into the conversation.
func (op Op) Turn() bool { return op == OpSend || op == OpRegenerate || op == OpEdit }
