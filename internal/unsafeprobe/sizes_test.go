package unsafeprobe

import (
	"fmt"
	"strings"
	"time"
)

// sizeCases are inputs whose sizes and scales could make Chrome allocate
// or work without end: a viewport, a screenshot, a PDF, a screencast, a
// zoom, a gesture or a text far past any screen or hand
// (docs/decisions/2026-11-27-sizes-and-scales-are-bounded.md). Each runs
// on an http page of the client's own tab; its name starts with "size ".
func sizeCases() []tcase {
	const tall = "document.body.style.height='1000000px'"
	shot := step{"Page.captureScreenshot", `{"format":"png"}`}
	eval := step{"Runtime.evaluate", `{"expression":"[innerWidth, innerHeight, devicePixelRatio, visualViewport.scale]+''","returnByValue":true}`}
	dm := func(name, params string, then ...step) tcase {
		return tcase{name: "size " + name, start: "SITE/form", method: "Emulation.setDeviceMetricsOverride", params: params, then: append([]step{eval}, then...), wait: 20 * time.Second, once: true}
	}
	one := func(name, start, method, params string, prep ...string) tcase {
		return tcase{name: name, start: start, prep: prep, method: method, params: params, wait: 20 * time.Second, once: true}
	}
	beyond := func(name string, w, h, scale int) tcase {
		return one("size sweep "+name, "SITE/form", "Page.captureScreenshot", fmt.Sprintf(`{"format":"png","captureBeyondViewport":true,"clip":{"x":0,"y":0,"width":%d,"height":%d,"scale":%d}}`, w, h, scale), tall, fmt.Sprintf("document.body.style.width='%dpx'", w))
	}
	text := strings.Repeat("x", 50<<20)
	return []tcase{
		dm("dm 10M dsf10", `{"width":10000000,"height":10000000,"deviceScaleFactor":10,"mobile":false}`, shot),
		dm("dm 10M dsf1000", `{"width":10000000,"height":10000000,"deviceScaleFactor":1000,"mobile":false}`, shot),
		dm("dm 10M dsf1 mobile", `{"width":10000000,"height":10000000,"deviceScaleFactor":1,"mobile":true}`, shot),
		dm("dm 10M dsf0", `{"width":10000000,"height":10000000,"deviceScaleFactor":0,"mobile":false}`, shot),
		dm("dm 800 dsf1000", `{"width":800,"height":600,"deviceScaleFactor":1000,"mobile":false}`, shot),
		dm("dm 800 dsf1e6", `{"width":800,"height":600,"deviceScaleFactor":1000000,"mobile":false}`, shot),
		dm("dm screen 10M", `{"width":800,"height":600,"deviceScaleFactor":1,"mobile":false,"screenWidth":10000000,"screenHeight":10000000}`, shot),
		dm("dm scale 10", `{"width":800,"height":600,"deviceScaleFactor":1,"mobile":false,"scale":10}`, shot),
		dm("dm viewport scale", `{"width":800,"height":600,"deviceScaleFactor":1,"mobile":false,"viewport":{"x":0,"y":0,"width":800,"height":600,"scale":1000}}`, shot),
		dm("dm viewport 10M", `{"width":0,"height":0,"deviceScaleFactor":0,"mobile":false,"viewport":{"x":0,"y":0,"width":10000000,"height":10000000,"scale":10}}`, shot),
		dm("dm 20000 dsf1", `{"width":20000,"height":20000,"deviceScaleFactor":1,"mobile":false}`, shot),
		dm("dm 10M no shot", `{"width":10000000,"height":10000000,"deviceScaleFactor":1,"mobile":false}`),
		one("size shot clip 100k s10", "SITE/form", "Page.captureScreenshot", `{"format":"png","clip":{"x":0,"y":0,"width":100000,"height":100000,"scale":10}}`),
		one("size shot clip 100k s1", "SITE/form", "Page.captureScreenshot", `{"format":"png","clip":{"x":0,"y":0,"width":100000,"height":100000,"scale":1}}`),
		one("size shot clip 1e7 beyond", "SITE/form", "Page.captureScreenshot", `{"format":"png","captureBeyondViewport":true,"clip":{"x":0,"y":0,"width":10000000,"height":10000000,"scale":1}}`),
		one("size shot tall beyond", "SITE/form", "Page.captureScreenshot", `{"format":"png","captureBeyondViewport":true,"clip":{"x":0,"y":0,"width":800,"height":1000000,"scale":1}}`, tall),
		one("size shot tall beyond s10", "SITE/form", "Page.captureScreenshot", `{"format":"png","captureBeyondViewport":true,"clip":{"x":0,"y":0,"width":800,"height":1000000,"scale":10}}`, tall),
		one("size shot beyond noclip tall", "SITE/form", "Page.captureScreenshot", `{"format":"png","captureBeyondViewport":true}`, tall, "document.body.style.width='25000px'"),
		dm("dm 10M shot then cleared", `{"width":10000000,"height":10000000,"deviceScaleFactor":1,"mobile":false}`, step{"Page.captureScreenshot", `{"format":"png"}`}, step{"Emulation.clearDeviceMetricsOverride", `{}`}, shot, step{"Page.getLayoutMetrics", `{}`}),
		dm("dm dsf1000 metrics", `{"width":800,"height":600,"deviceScaleFactor":1000,"mobile":false}`, step{"Page.getLayoutMetrics", `{}`}),
		one("size shot jpeg clip 30k", "SITE/form", "Page.captureScreenshot", `{"format":"jpeg","quality":100,"clip":{"x":0,"y":0,"width":30000,"height":30000,"scale":1}}`),
		// Where a screenshot's size starts to crash or stall the browser.
		beyond("800x16384", 800, 16384, 1),
		beyond("800x32768", 800, 32768, 1),
		beyond("800x100000", 800, 100000, 1),
		beyond("800x300000", 800, 300000, 1),
		beyond("16384x16384", 16384, 16384, 1),
		beyond("25000x25000", 25000, 25000, 1),
		beyond("4000x4000 s4", 4000, 4000, 4),
		beyond("1280x20000 s2", 1280, 20000, 2),
		dm("sweep dm 16384 shot", `{"width":16384,"height":16384,"deviceScaleFactor":1,"mobile":false}`, shot),
		dm("sweep dm 8000 shot", `{"width":8000,"height":8000,"deviceScaleFactor":1,"mobile":false}`, shot),
		dm("sweep dm 1280 dsf10 shot", `{"width":1280,"height":720,"deviceScaleFactor":10,"mobile":false}`, shot),
		dm("sweep dm 1920 dsf20 shot", `{"width":1920,"height":1080,"deviceScaleFactor":20,"mobile":false}`, shot),
		beyond("10x10000000", 10, 10000000, 1),
		dm("extra viewport scale 10", `{"width":800,"height":600,"deviceScaleFactor":1,"mobile":false,"viewport":{"x":0,"y":0,"width":800,"height":600,"scale":10}}`, shot),
		dm("extra viewport scale 100", `{"width":800,"height":600,"deviceScaleFactor":1,"mobile":false,"viewport":{"x":0,"y":0,"width":800,"height":600,"scale":100}}`, shot),
		{name: "size extra mouse xy 1e308 then click", start: "SITE/form", method: "Input.dispatchMouseEvent", params: `{"type":"mouseMoved","x":1e308,"y":1e308}`, wait: 5 * time.Second, once: true,
			then: []step{{"Input.dispatchMouseEvent", `{"type":"mousePressed","x":10,"y":10,"button":"left","clickCount":1}`}, {"Input.dispatchMouseEvent", `{"type":"mouseReleased","x":10,"y":10,"button":"left","clickCount":1}`}}},
		one("size extra mouse xy 1e7", "SITE/form", "Input.dispatchMouseEvent", `{"type":"mouseMoved","x":10000000,"y":10000000}`),
		one("size extra mouse xy 1e10", "SITE/form", "Input.dispatchMouseEvent", `{"type":"mouseMoved","x":10000000000,"y":10}`),
		one("size extra mouse xy -1e10", "SITE/form", "Input.dispatchMouseEvent", `{"type":"mousePressed","x":-10000000000,"y":10,"button":"left","clickCount":1}`),
		one("size extra touch xy 1e308", "SITE/form", "Input.dispatchTouchEvent", `{"type":"touchStart","touchPoints":[{"x":1e308,"y":1e308}]}`),
		one("size extra insertText 1MB", "SITE/form", "Input.insertText", `{"text":"`+strings.Repeat("x", 1<<20)+`"}`, "document.querySelector('input,textarea').focus()"),
		one("size extra insertText 5MB", "SITE/form", "Input.insertText", `{"text":"`+strings.Repeat("x", 5<<20)+`"}`, "document.querySelector('input,textarea').focus()"),
		one("size extra eval 50MB", "SITE/form", "Runtime.evaluate", `{"expression":"'`+text+`'.length"}`),
		one("size pdf paper 1e6", "SITE/form", "Page.printToPDF", `{"paperWidth":1000000,"paperHeight":1000000,"scale":2}`),
		one("size pdf paper 1000", "SITE/form", "Page.printToPDF", `{"paperWidth":1000,"paperHeight":1000,"scale":2}`),
		one("size pdf ranges huge", "SITE/form", "Page.printToPDF", `{"pageRanges":"1-1000000000"}`),
		one("size pdf tall tiny paper", "SITE/form", "Page.printToPDF", `{"paperWidth":1,"paperHeight":0.1,"scale":0.1}`, tall),
		one("size pdf tall", "SITE/form", "Page.printToPDF", `{"scale":2}`, tall),
		{name: "size screencast huge", start: "SITE/form", method: "Page.startScreencast", params: `{"format":"png","maxWidth":10000000,"maxHeight":10000000,"everyNthFrame":1}`,
			then: []step{{"Runtime.evaluate", `{"expression":"new Promise(r=>setTimeout(r,3000))","awaitPromise":true}`}, {"Page.stopScreencast", `{}`}}, wait: 20 * time.Second, once: true},
		{name: "size screencast dsf1000", start: "SITE/form", method: "Emulation.setDeviceMetricsOverride", params: `{"width":800,"height":600,"deviceScaleFactor":1000,"mobile":false}`,
			then: []step{{"Page.startScreencast", `{"format":"png","maxWidth":10000000,"maxHeight":10000000,"everyNthFrame":1}`}, {"Runtime.evaluate", `{"expression":"new Promise(r=>setTimeout(r,3000))","awaitPromise":true}`}, {"Page.stopScreencast", `{}`}}, wait: 20 * time.Second, once: true},
		{name: "size pagescale 1e9", start: "SITE/form", method: "Emulation.setPageScaleFactor", params: `{"pageScaleFactor":1000000000}`, then: []step{eval, shot}, wait: 20 * time.Second, once: true},
		{name: "size visiblesize 10M", start: "SITE/form", method: "Emulation.setVisibleSize", params: `{"width":10000000,"height":10000000}`, then: []step{eval, shot}, wait: 20 * time.Second, once: true},
		one("size pinch 1e9", "SITE/form", "Input.synthesizePinchGesture", `{"x":10,"y":10,"scaleFactor":1000000000}`),
		one("size scroll repeat 1e9 0px", "SITE/form", "Input.synthesizeScrollGesture", `{"x":10,"y":10,"yDistance":0,"repeatCount":1000000000,"repeatDelayMs":0}`),
		one("size scroll repeat 1e9 1px fast", "SITE/form", "Input.synthesizeScrollGesture", `{"x":10,"y":10,"yDistance":-1,"speed":1000000000,"repeatCount":1000000000,"repeatDelayMs":0}`),
		one("size tap repeat dur0", "SITE/form", "Input.synthesizeTapGesture", `{"x":10,"y":10,"tapCount":10,"duration":0}`),
		one("size mouse clickCount 1e9", "SITE/form", "Input.dispatchMouseEvent", `{"type":"mousePressed","x":10,"y":10,"button":"left","clickCount":1000000000}`),
		one("size mouse wheel 1e308", "SITE/form", "Input.dispatchMouseEvent", `{"type":"mouseWheel","x":10,"y":10,"deltaX":1e308,"deltaY":1e308}`, tall),
		one("size mouse xy 1e308", "SITE/form", "Input.dispatchMouseEvent", `{"type":"mouseMoved","x":1e308,"y":1e308}`),
		one("size insertText 50MB", "SITE/form", "Input.insertText", `{"text":"`+text+`"}`, "document.querySelector('input,textarea').focus()"),
		one("size keyEvent 50MB", "SITE/form", "Input.dispatchKeyEvent", `{"type":"keyDown","text":"`+text+`"}`, "document.querySelector('input,textarea').focus()"),
		one("size imeComposition 50MB", "SITE/form", "Input.imeSetComposition", `{"text":"`+text+`","selectionStart":0,"selectionEnd":0}`, "document.querySelector('input,textarea').focus()"),
		one("size touch points 1e9", "SITE/form", "Emulation.setTouchEmulationEnabled", `{"enabled":true,"maxTouchPoints":1000000000}`),
		one("size network buffers 1e15", "SITE/form", "Network.enable", `{"maxTotalBufferSize":1000000000000000,"maxResourceBufferSize":1000000000000000}`),
	}
}
