module github.com/orchard-llm/orchard

go 1.26.0

require (
	github.com/progrium/darwinkit v0.5.0
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.44.0
	golang.org/x/tools v0.52.0
)

require (
	github.com/daulet/tokenizers v1.24.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
)
