module github.com/browserpool/browserpool/bench/anchors

go 1.26.0

replace github.com/browserpool/browserpool => ../..

require (
	github.com/browserpool/browserpool v0.0.0-00010101000000-000000000000
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/go-rod/rod v0.116.2
	github.com/google/go-cmp v0.7.0
	github.com/mafredri/cdp v0.35.0
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/ysmood/fetchup v0.2.3 // indirect
	github.com/ysmood/goob v0.4.0 // indirect
	github.com/ysmood/got v0.40.0 // indirect
	github.com/ysmood/gson v0.7.3 // indirect
	github.com/ysmood/leakless v0.9.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
)
