// A synchronous POST, so that it is done before the page's load event and
// Firefox's HAR auto-export (on dom-complete) includes it.
var xhr = new XMLHttpRequest();
xhr.open("POST", "/echo", false);
xhr.setRequestHeader("Content-Type", "application/json");
xhr.send('{"item":42}');
