// Package engine is the conversation over a bundle's chain: Session holds
// the messages, renders the template, runs turns (KV reuse, prompt-lookup
// speculation, sampling, stop strings, context policy), keeps versions,
// history and checkpoints and reports metrics; Engine runs a Session on its
// own goroutine, queues commands and delivers events to a front end;
// Complete serves an API request's conversation beside the chat's; Encoders
// turn images and speech into the soft rows a turn places.
//
// How a bundle's graphs are called is package engine/chain's: engine sees
// them only through chain.Chain. Touch engine/chain, not this package, to
// add a bundle family; touch this one for what a conversation does. engine
// never imports a front end (tui, server) and knows nothing of HTTP.
package engine
