// The official OpenAI, ollama and Anthropic clients, making their usual
// calls against orchard serve --demo (run.sh starts it, playing
// tools-script.json where a message asks about the weather, and sets
// ORCHARD_URL, ORCHARD_KEY and ORCHARD_CLIP). The demo's weights are
// random, so the replies are noise; what is checked is that each client
// gets what its API promises: shapes, streams, usage, errors it can read.
// Greedy decoding makes the same request give the same reply, streamed or
// not, which is checked too.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

import OpenAI from "openai";
import { Ollama } from "ollama";
import Anthropic from "@anthropic-ai/sdk";

const url = process.env.ORCHARD_URL;
const key = process.env.ORCHARD_KEY;
const clip = process.env.ORCHARD_CLIP || "";
if (!url || !key) {
  throw new Error("run through server/clienttest/run.sh: ORCHARD_URL and ORCHARD_KEY name the server");
}

// A 24×18 PNG (RGB gradient).
const png =
  "iVBORw0KGgoAAAANSUhEUgAAABgAAAASCAIAAADOjonJAAAEYUlEQVR42hWUwYvWRhyGf9V1XeM6+7mNdqtpWHXRMN0tX6PolAZct3ZYapUURrCx0CWmoiBhaLGmlyDBopQBFwqhBg9pQUjTi4cQCtIgGCQHoXZOPURIoaTQQ5BeerFY/Qeew8vzPgAACoAKoAMYACaABUABbAAHwAPwAQKACEAAxAApQA5QAFQADYAEaAH6FxRAoKBXVLRBRxsNNGGiTRaapGizjaYctMVDio+2Bmg6QtsEQjGaSdEoR9sLNFuhVxukSrSjRTt79BqABoq2QdUmdG3S0KZMTbG0aaohWxs52qynqb62M9DmIm2X0LRY01NtPtf2FtpCpe1vNENquNUWe+0tAAwK3qjiSR1vMfC0iWcsPEvxDhvPOXi3h3Uf7wnwQoQPCIxjvJTicY4PFvhwhd9psCXx0Rav9Ph9AAIKmVDJlE6mDTIyiWqROUo0m8w7ZMEjhk8WAzKOyCFBSEyslCzn5HhBVivyYUNsSVhLzvTkk5fDKnSTShWdzhhUNenrFtUp3WdTw6FLHjV9eiSgVkSPCUpjeiKldk5PF9Sp6KcN9SS92FK/p18AMFDYpMqmdTZrsDmT6RZboAzbbOywwx6zfLYSsNWInRKMxcxJ2VrOzhfsUsU+b1ggWdiyaz37BsAFxd2sukh3dxiuZrr7LBdT923bJY571HOp754MXBa5Z4Xrxu7F1OW5e6Vww8r9unGFdL9t3aR3vwfgoPAplY90PmfweZMbFh9TTmy+7PBVj9s+PxPwtYhfEJzHPEj51ZzfKPh6xb9reCp51vK7Pf8ZIAQl3KKGs3q42wgXzHDJCg/T8KgdrjrhR17o+OG5ILwUhZdFGMbh9TRcz8NbRfhDFf7UhIUMf2nDh33460thFaGoQtWFbgjDFKYlLCqoLWxHOJ7wfOEHIohEJISIRZyKNBd5IYpKVI1opJCtaHvxwu0ElGSrmuzUkz1GsmgmR6xkhSYn7eSMk5zzEt9PvgqSa1FyUyRJnNxJk7t5cq9IHlbJb03SyuSvNvmnT/4DyEDJptVsTs8WjGxsZpaVrdKM2dmak13yssDPrgXZepTdFlkWZ0Wa3c+zR0X2e5X92WRPZfaszab67MVZS1DKbWq5Sy8PGOUhszxmladoedYuLzjlZa+M/PJmUN6Oyh9FWcblg7R8nJdPivLvqvy3KSdkub0t9b58E6AGpUZqrek1Nmpi1tSqGa1du+ZOHXq18OskqLOoLkVdx7VM6y6vh6J+VtVKU8/Jen9bH+rrlZchUOSMKnVdLhnSMuUJSzpUXrRl4Mjrnox9eSeQRSQfCClj+Ucqn+byeSFRJd9o5KKU77byg15+DNCB0o3Ubl7vxka3bHa21a3RjtvdVadb97rU7+4G3f2oeyy6Lu6eph3k3ajo5qtu3HTLsrPbbq3vOMAAyrBdHfbqw0FjOG4Op63hPB2u2MMNZ7jlDbk/3AuGR9HwRAxDPDxPh1E+7CkGsxreawYmh8/a4ct+uP4/wYAO84LMaGYAAAAASUVORK5CYII=";

const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
const ollama = new Ollama({ host: url, headers: { Authorization: `Bearer ${key}` } });
const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });

const model = (await openai.models.list()).data[0].id;

test("openai: chat, streamed and not, served from the cache the second time", async () => {
  const messages = [{ role: "user", content: "Tell me about apple orchards." }];
  const one = await openai.chat.completions.create({ model, messages, max_tokens: 8 });
  assert.equal(one.object, "chat.completion");
  assert.equal(typeof one.choices[0].message.content, "string");
  assert.equal(one.choices[0].finish_reason, "length");
  assert.equal(one.usage.completion_tokens, 8);

  const stream = await openai.chat.completions.create({ model, messages, max_tokens: 8, stream: true, stream_options: { include_usage: true } });
  let text = "";
  let usage;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? "";
    usage = chunk.usage ?? usage;
  }
  assert.equal(text, one.choices[0].message.content);
  assert.ok(usage.prompt_tokens_details.cached_tokens > 0, "the same prompt again comes from the cache");
});

test("openai: completions (a raw prompt), streamed and not", async () => {
  const one = await openai.completions.create({ model, prompt: "Once upon a time", max_tokens: 8 });
  assert.equal(one.object, "text_completion");
  assert.equal(one.usage.completion_tokens, 8);
  const stream = await openai.completions.create({ model, prompt: "Once upon a time", max_tokens: 8, stream: true });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
  assert.equal(text, one.choices[0].text);
});

test("openai: errors are OpenAI's objects with a remedy", async () => {
  await assert.rejects(openai.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }), (err) => {
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.match(err.message, /no-such-model/);
    return true;
  });
  const long = "apple ".repeat(5000);
  await assert.rejects(openai.chat.completions.create({ model, messages: [{ role: "user", content: long }] }), (err) => {
    assert.equal(err.status, 400);
    assert.equal(err.code, "context_length_exceeded");
    assert.match(err.message, /shorten the messages/);
    assert.doesNotMatch(err.message, /\/clear/);
    return true;
  });
});

// One call: the demo's noise runs to the transcript's token cap, the
// slowest request here (response_format text is checked in Go).
test("openai: transcription of a spoken clip", { skip: clip === "" && "no clip: espeak-ng is not installed" }, async () => {
  const json = await openai.audio.transcriptions.create({ model, file: fs.createReadStream(clip), language: "en" });
  assert.equal(typeof json.text, "string");
  assert.ok(json.text.length > 0);
  assert.ok(json.usage.input_tokens > 50, "the clip's audio tokens are in the prompt");
});

test("ollama: version, list, show, ps", async () => {
  assert.match((await ollama.version()).version, /^\d+\.\d+\.\d+$/);
  const list = await ollama.list();
  assert.equal(list.models.length, 1);
  assert.ok(list.models[0].size > 0);
  assert.equal(list.models[0].details.format, "coreml");
  const show = await ollama.show({ model });
  for (const cap of ["completion", "vision", "audio", "tools"]) assert.ok(show.capabilities.includes(cap), `capabilities ${show.capabilities}`);
  const arch = show.model_info["general.architecture"];
  assert.equal(show.model_info[`${arch}.context_length`], 2048);
  assert.match(show.parameters, /num_ctx\s+2048/);
  const ps = await ollama.ps();
  assert.equal(ps.models[0].name, model);
  assert.ok(new Date(ps.models[0].expires_at) > new Date());
});

test("ollama: generate, streamed and not, raw, and the load call", async () => {
  const options = { num_predict: 8 };
  const one = await ollama.generate({ model, prompt: "Tell me about pears.", system: "Be brief.", options, keep_alive: "5m" });
  assert.equal(one.done, true);
  assert.equal(one.done_reason, "length");
  assert.equal(one.eval_count, 8);
  let text = "";
  let last;
  for await (const part of await ollama.generate({ model, prompt: "Tell me about pears.", system: "Be brief.", options, stream: true })) {
    text += part.response;
    last = part;
  }
  assert.equal(text, one.response);
  assert.equal(last.prompt_eval_count, one.prompt_eval_count, "prompt_eval_count counts the cached prompt too");
  assert.ok(last.orchard_prefilled_count < last.prompt_eval_count);
  const raw = await ollama.generate({ model, prompt: "<|turn>user\nhi<turn|>\n<|turn>model\n", raw: true, options });
  assert.equal(raw.eval_count, 8);
  const load = await ollama.generate({ model, prompt: "" });
  assert.equal(load.done_reason, "load");
});

test("ollama: chat with a picture, streamed", async () => {
  let text = "";
  let last;
  const stream = await ollama.chat({ model, stream: true, options: { num_predict: 8 }, messages: [{ role: "user", content: "What is this?", images: [png] }] });
  for await (const part of stream) {
    text += part.message.content;
    last = part;
  }
  assert.equal(last.done, true);
  assert.equal(last.eval_count, 8);
  assert.equal(typeof text, "string");
});

test("ollama: errors are strings the client shows", async () => {
  await assert.rejects(ollama.embed({ model, input: "apples" }), (err) => {
    assert.equal(err.status_code, 501);
    assert.match(err.message, /embeddings are not supported/);
    return true;
  });
  await assert.rejects(ollama.chat({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }), (err) => {
    assert.doesNotMatch(err.message, /\[object Object\]/);
    assert.match(err.message, /no-such-model/);
    return true;
  });
});

test("anthropic: messages with a picture, streamed and not", async () => {
  const content = [
    { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
    { type: "text", text: "What is this?" },
  ];
  const params = { model, max_tokens: 8, system: "Be brief.", messages: [{ role: "user", content }] };
  const one = await anthropic.messages.create(params);
  assert.equal(one.type, "message");
  assert.equal(one.content[0].type, "text");
  assert.equal(one.stop_reason, "max_tokens");
  assert.equal(one.usage.output_tokens, 8);

  let text = "";
  const stream = anthropic.messages.stream(params).on("text", (t) => (text += t));
  const final = await stream.finalMessage();
  assert.equal(text, one.content[0].text);
  assert.equal(final.content[0].text, one.content[0].text);
  assert.ok(final.usage.cache_read_input_tokens > 0, "the same prompt again comes from the cache");
});

test("anthropic: errors are Anthropic's objects", async () => {
  await assert.rejects(anthropic.messages.create({ model: "claude-nothing", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }), (err) => {
    assert.ok(err instanceof Anthropic.NotFoundError, String(err));
    assert.equal(err.error.type, "error");
    assert.match(err.error.error.message, /claude-nothing/);
    return true;
  });
  const stranger = new Anthropic({ baseURL: url, apiKey: "wrong", maxRetries: 0 });
  await assert.rejects(stranger.messages.create({ model, max_tokens: 8, messages: [{ role: "user", content: "hi" }] }), Anthropic.AuthenticationError);
});

// Tools: tools-script.json makes the demo call get_weather when asked
// about the weather, and answer when the result comes back.
const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
const weatherQuestion = { role: "user", content: "What is the weather in Paris?" };

test("openai: tools round trip, the follow-up served from the cache", async () => {
  const first = await openai.chat.completions.create({ model, messages: [weatherQuestion], tools: [weatherTool], max_tokens: 64 });
  const choice = first.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.tool_calls.length, 1);
  const call = choice.message.tool_calls[0];
  assert.equal(call.type, "function");
  assert.equal(call.function.name, "get_weather");
  assert.deepEqual(JSON.parse(call.function.arguments), { city: "Paris" });
  assert.ok(call.id);

  const messages = [weatherQuestion, choice.message, { role: "tool", tool_call_id: call.id, content: JSON.stringify({ sky: "sunny" }) }];
  const second = await openai.chat.completions.create({ model, messages, tools: [weatherTool], max_tokens: 64 });
  assert.equal(second.choices[0].finish_reason, "stop");
  assert.equal(second.choices[0].message.content, "It is sunny in Paris.");
  // The whole earlier turn, the model's own call included, comes from the
  // cache: only the tool's result is prefilled.
  assert.equal(second.usage.prompt_tokens_details.cached_tokens, first.usage.prompt_tokens + first.usage.completion_tokens);
});

test("openai: streamed tool-call deltas", async () => {
  const stream = await openai.chat.completions.create({ model, messages: [weatherQuestion], tools: [weatherTool], max_tokens: 64, stream: true });
  let text = "";
  let reason;
  const calls = [];
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (!c) continue;
    text += c.delta?.content ?? "";
    for (const d of c.delta?.tool_calls ?? []) {
      const slot = (calls[d.index] ??= { id: "", name: "", arguments: "" });
      slot.id += d.id ?? "";
      slot.name += d.function?.name ?? "";
      slot.arguments += d.function?.arguments ?? "";
    }
    reason = c.finish_reason ?? reason;
  }
  assert.equal(reason, "tool_calls");
  assert.equal(text, "Let me look.");
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, "get_weather");
  assert.deepEqual(JSON.parse(calls[0].arguments), { city: "Paris" });
  // The client's own stream helper reassembles the same message.
  const final = await openai.chat.completions.stream({ model, messages: [weatherQuestion], tools: [weatherTool], max_tokens: 64 }).finalChatCompletion();
  assert.equal(final.choices[0].message.tool_calls[0].function.name, "get_weather");
  assert.equal(final.choices[0].message.tool_calls[0].function.arguments, '{"city":"Paris"}');
});

test("ollama: tools round trip", async () => {
  const first = await ollama.chat({ model, stream: false, messages: [weatherQuestion], tools: [weatherTool], options: { num_predict: 64 } });
  assert.equal(first.message.tool_calls.length, 1);
  assert.equal(first.message.tool_calls[0].function.name, "get_weather");
  assert.deepEqual(first.message.tool_calls[0].function.arguments, { city: "Paris" });
  const messages = [weatherQuestion, first.message, { role: "tool", tool_name: "get_weather", content: "sunny" }];
  const second = await ollama.chat({ model, stream: false, messages, tools: [weatherTool], options: { num_predict: 64 } });
  assert.equal(second.message.content, "It is sunny in Paris.");
  assert.ok(second.orchard_prefilled_count < second.prompt_eval_count, "the earlier turn comes from the cache");
});

test("anthropic: tools round trip", async () => {
  const tools = [{ name: "get_weather", description: "The weather in a city", input_schema: weatherTool.function.parameters }];
  const first = await anthropic.messages.create({ model, max_tokens: 64, tools, messages: [weatherQuestion] });
  assert.equal(first.stop_reason, "tool_use");
  const use = first.content.find((b) => b.type === "tool_use");
  assert.equal(use.name, "get_weather");
  assert.deepEqual(use.input, { city: "Paris" });
  const streamed = await anthropic.messages.stream({ model, max_tokens: 64, tools, messages: [weatherQuestion] }).finalMessage();
  assert.deepEqual(streamed.content.find((b) => b.type === "tool_use").input, { city: "Paris" });
  const messages = [
    weatherQuestion,
    { role: "assistant", content: first.content },
    { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] },
  ];
  const second = await anthropic.messages.create({ model, max_tokens: 64, tools, messages });
  assert.equal(second.stop_reason, "end_turn");
  assert.equal(second.content[0].text, "It is sunny in Paris.");
});
