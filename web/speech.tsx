/**
 * The speak button: the session's speech WebSocket (`v1/sessions/:id/speech`)
 * played through Web Audio. The handshake carries the session cookie like every other request (the server
 * accepts it from this page's own origin only, src/server/speech-routes.ts); the page holds no token.
 * Each reply arrives as a JSON `start` with its PCM format, binary frames of signed 16-bit little-endian
 * samples, and an `end`; frames are scheduled back to back so playback has no gaps.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { apiUrl } from "./api.js";
import { Icon } from "./icons.js";

type Format = { encoding: string; sample_rate: number; channels: number };

export function Speaker({ sessionId }: { sessionId: string }) {
  const [on, setOn] = useState(false);
  const [state, setState] = useState("off");
  const socket = useRef<WebSocket | undefined>(undefined);
  useEffect(() => {
    if (!on) return;
    const audio = new AudioContext();
    let format: Format | undefined;
    let at = 0;
    const url = apiUrl(`v1/sessions/${encodeURIComponent(sessionId)}/speech`).replace(/^http/, "ws");
    const ws = new WebSocket(url, ["bdsh"]);
    ws.binaryType = "arraybuffer";
    socket.current = ws;
    ws.onopen = () => setState("listening");
    ws.onclose = () => setState("off");
    ws.onerror = () => setState("unavailable");
    ws.onmessage = (message) => {
      if (typeof message.data === "string") {
        const header = JSON.parse(message.data) as { type: string; format?: Format };
        if (header.type === "start" && header.format) {
          format = header.format;
          setState("speaking");
        } else if (header.type === "end" || header.type === "abort") setState("listening");
        return;
      }
      if (!format) return;
      const samples = new Int16Array(message.data as ArrayBuffer);
      const channels = format.channels || 1;
      const frames = Math.floor(samples.length / channels);
      if (frames === 0) return;
      const buffer = audio.createBuffer(channels, frames, format.sample_rate);
      for (let c = 0; c < channels; c++) {
        const out = buffer.getChannelData(c);
        for (let i = 0; i < frames; i++) out[i] = samples[i * channels + c]! / 32768;
      }
      const source = audio.createBufferSource();
      source.buffer = buffer;
      source.connect(audio.destination);
      at = Math.max(at, audio.currentTime + 0.05);
      source.start(at);
      at += buffer.duration;
    };
    return () => {
      ws.close();
      void audio.close();
      socket.current = undefined;
    };
  }, [on, sessionId]);
  return (
    <button type="button" data-testid="speak" data-state={state} aria-pressed={on} onClick={() => setOn(!on)}>
      <Icon name={on ? "speaker" : "speakerOff"} />
      {on ? state : "Speak"}
    </button>
  );
}
