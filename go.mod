module github.com/browserpool/browserpool

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/gorilla/websocket v1.5.3
	github.com/mafredri/cdp v0.35.0
	golang.org/x/sync v0.25.0
)
