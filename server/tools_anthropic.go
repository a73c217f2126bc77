package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/orchard-llm/orchard/tools"
)

// Tool calling through Anthropic's Messages API: tools (name, description,
// input_schema) and tool_choice, tool_use blocks in assistant messages and
// tool_result blocks in user messages, and replies whose tool_use blocks
// end with stop_reason "tool_use" (streamed as input_json_delta).

// anthropicTool is a tool as the Messages API declares it; server tools
// (a type other than custom) are refused.
type anthropicTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// anthropicToolChoice is the Messages API's tool_choice.
type anthropicToolChoice struct {
	Type                   string `json:"type"` // auto, any, tool, none
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

// anthropicTools reads tools and tool_choice as the chat path's.
func anthropicTools(rawTools, rawChoice json.RawMessage) ([]tools.Declaration, toolMode, error) {
	var specs []toolSpec
	if given(rawTools) {
		var in []anthropicTool
		if err := decodeJSONNumbers(rawTools, &in); err != nil {
			return nil, toolMode{}, bad("invalid_value", "tools", "tools must be an array of {\"name\",\"description\",\"input_schema\"}")
		}
		for i, t := range in {
			if t.Type != "" && t.Type != "custom" {
				return nil, toolMode{}, bad("unsupported_value", fmt.Sprintf("tools[%d].type", i), fmt.Sprintf("server tools (%q) are not supported: declare custom tools", t.Type))
			}
			sp := toolSpec{Type: "function"}
			sp.Function = &struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				Parameters  map[string]any `json:"parameters"`
			}{t.Name, t.Description, t.InputSchema}
			specs = append(specs, sp)
		}
	}
	raw, _ := json.Marshal(specs)
	decls, err := declarationsOf(raw)
	if err != nil {
		return nil, toolMode{}, err
	}
	var choice json.RawMessage
	single := false
	if given(rawChoice) {
		var tc anthropicToolChoice
		if err := json.Unmarshal(rawChoice, &tc); err != nil {
			return nil, toolMode{}, bad("invalid_value", "tool_choice", "tool_choice must be {\"type\":\"auto\"|\"any\"|\"tool\"|\"none\"}")
		}
		single = tc.DisableParallelToolUse
		switch tc.Type {
		case "auto", "":
		case "any":
			choice = json.RawMessage(`"required"`)
		case "none":
			choice = json.RawMessage(`"none"`)
		case "tool":
			choice, _ = json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}})
		default:
			return nil, toolMode{}, bad("invalid_value", "tool_choice.type", fmt.Sprintf("tool_choice type %q: want auto, any, tool or none", tc.Type))
		}
	}
	decls, mode, err := toolChoiceOf(choice, decls)
	mode.single = single
	return decls, mode, err
}

// toolMessages are the chat path's messages for a message's tool blocks:
// an assistant's tool_use blocks as its tool_calls (with its other
// content), a user's tool_result blocks as tool messages, each answering
// the call its tool_use_id names, before the user's other content (none
// when it holds only results).
func (c *anthropicContent) toolMessages(i int, role string, content contentJSON) ([]chatMessage, error) {
	var calls []toolCallJSON
	var results []chatMessage
	others := 0
	for j := range c.blocks {
		b := &c.blocks[j]
		param := fmt.Sprintf("messages[%d].content[%d]", i, j)
		switch b.Type {
		case "tool_use":
			if role != "assistant" {
				return nil, bad("invalid_value", param, "tool_use blocks are the assistant's")
			}
			var tc toolCallJSON
			tc.ID, tc.Type = b.ID, "function"
			tc.Function.Name, tc.Function.Arguments = b.Name, b.Input
			calls = append(calls, tc)
		case "tool_result":
			if role != "user" {
				return nil, bad("invalid_value", param, "tool_result blocks are the user's")
			}
			text, err := textBlocks(b.Content, param+".content", "\n")
			if err != nil {
				return nil, err
			}
			if b.IsError {
				text = "error: " + text // the model is told the call failed
			}
			results = append(results, chatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: contentJSON{text: text}})
		default:
			others++
		}
	}
	if role == "assistant" {
		m := chatMessage{Role: role, Content: content}
		if len(calls) > 0 {
			raw, _ := json.Marshal(calls)
			m.ToolCalls = raw
		}
		return []chatMessage{m}, nil
	}
	if others > 0 || len(results) == 0 {
		results = append(results, chatMessage{Role: role, Content: content})
	}
	return results, nil
}

// anthropicToolUse is a tool_use block of a reply.
type anthropicToolUse struct {
	Type  string         `json:"type"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

func toolUseOf(c tools.Call) anthropicToolUse {
	args := c.Args
	if args == nil {
		args = map[string]any{}
	}
	return anthropicToolUse{Type: "tool_use", ID: newID("toolu_"), Name: c.Name, Input: args}
}

// anthropicBlocks writes a streamed reply's content blocks: text blocks
// and tool_use blocks, each opened, filled and stopped in turn.
type anthropicBlocks struct {
	w      http.ResponseWriter
	index  int  // the open block's
	isText bool // the open block is text (one is open from the start)
	open   bool
}

func (b *anthropicBlocks) stop() error {
	if !b.open {
		return nil
	}
	b.open = false
	return writeSSE(b.w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": b.index})
}

func (b *anthropicBlocks) text(t string) error {
	if t == "" {
		return nil
	}
	if !b.open || !b.isText {
		if err := b.stop(); err != nil {
			return err
		}
		b.index++
		b.open, b.isText = true, true
		if err := writeSSE(b.w, "content_block_start", map[string]any{"type": "content_block_start", "index": b.index, "content_block": anthropicText{Type: "text"}}); err != nil {
			return err
		}
	}
	return writeSSE(b.w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": b.index,
		"delta": map[string]string{"type": "text_delta", "text": t}})
}

func (b *anthropicBlocks) call(c tools.Call) error {
	if err := b.stop(); err != nil {
		return err
	}
	b.index++
	u := toolUseOf(c)
	input, _ := json.Marshal(u.Input)
	u.Input = map[string]any{}
	if err := writeSSE(b.w, "content_block_start", map[string]any{"type": "content_block_start", "index": b.index, "content_block": u}); err != nil {
		return err
	}
	if err := writeSSE(b.w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": b.index,
		"delta": map[string]string{"type": "input_json_delta", "partial_json": string(input)}}); err != nil {
		return err
	}
	b.open, b.isText = true, false
	return b.stop()
}
