// Room: the wire types of the built-in replies and events, in Chrome's
// field order. Plain data; no lock.

package cdptest

// Wire types, in Chrome's field order.

type version struct {
	ProtocolVersion string `json:"protocolVersion"`
	Product         string `json:"product"`
	Revision        string `json:"revision"`
	UserAgent       string `json:"userAgent"`
	JSVersion       string `json:"jsVersion"`
}

type targetInfo struct {
	TargetID         string `json:"targetId"`
	Type             string `json:"type"`
	Title            string `json:"title"`
	URL              string `json:"url"`
	Attached         bool   `json:"attached"`
	CanAccessOpener  bool   `json:"canAccessOpener"`
	BrowserContextID string `json:"browserContextId"`
}

type targetEvent struct {
	TargetInfo targetInfo `json:"targetInfo"`
}

type targetIDParams struct {
	TargetID string `json:"targetId"`
}

type targetCrashed struct {
	TargetID  string `json:"targetId"`
	Status    string `json:"status"`
	ErrorCode int    `json:"errorCode"`
}

type attachedToTarget struct {
	SessionID          string     `json:"sessionId"`
	TargetInfo         targetInfo `json:"targetInfo"`
	WaitingForDebugger bool       `json:"waitingForDebugger"`
}

type detachedFromTarget struct {
	SessionID string `json:"sessionId"`
	TargetID  string `json:"targetId"`
}

type navigateResult struct {
	FrameID   string `json:"frameId"`
	LoaderID  string `json:"loaderId"`
	ErrorText string `json:"errorText,omitempty"`
}

type lifecycleEvent struct {
	FrameID   string  `json:"frameId"`
	LoaderID  string  `json:"loaderId"`
	Name      string  `json:"name"`
	Timestamp float64 `json:"timestamp"`
}

type frameIDParams struct {
	FrameID string `json:"frameId"`
}

type timestamp struct {
	Timestamp float64 `json:"timestamp"`
}

type frame struct {
	ID                             string   `json:"id"`
	LoaderID                       string   `json:"loaderId"`
	URL                            string   `json:"url"`
	DomainAndRegistry              string   `json:"domainAndRegistry"`
	SecurityOrigin                 string   `json:"securityOrigin"`
	MimeType                       string   `json:"mimeType"`
	SecureContextType              string   `json:"secureContextType"`
	CrossOriginIsolatedContextType string   `json:"crossOriginIsolatedContextType"`
	GatedAPIFeatures               []string `json:"gatedAPIFeatures"`
}

type frameNavigated struct {
	Frame frame  `json:"frame"`
	Type  string `json:"type"`
}

type executionContext struct {
	ID       int    `json:"id"`
	Origin   string `json:"origin"`
	Name     string `json:"name"`
	UniqueID string `json:"uniqueId"`
	AuxData  struct {
		IsDefault bool   `json:"isDefault"`
		Type      string `json:"type"`
		FrameID   string `json:"frameId"`
	} `json:"auxData"`
}

type contextEvent struct {
	Context executionContext `json:"context"`
}
