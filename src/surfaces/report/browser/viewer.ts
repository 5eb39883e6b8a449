/** The screenshot viewer: a dialog with the full-size picture and its markers. */
import type { ReportImage } from "../model-types.ts";
import { viewer, viewerCaption, viewerFrame, viewerImg } from "./layout.ts";
import { type Marker, type Size, markersSvg } from "./markers.ts";
import type { Shot, Step } from "./steps.ts";

export function openViewer(
  step: Step,
  shot: Shot,
  image: ReportImage,
  viewport: Size,
  markers: readonly Marker[],
): void {
  viewerImg.src = image.full || image.src;
  viewerImg.alt = `${shot.role} screenshot, step ${step.seq}`;
  const w = image.sourceWidth || image.width;
  const h = image.sourceHeight || image.height;
  // Full size, but never larger than the window: the markers overlay follows the picture's box.
  const scale = Math.min(1, (window.innerWidth * 0.96 - 24) / w, (window.innerHeight * 0.96 - 60) / h);
  if (w > 0 && h > 0) {
    viewerImg.style.width = `${Math.round(w * scale)}px`;
    viewerImg.style.height = `${Math.round(h * scale)}px`;
  }
  const old = viewerFrame.querySelector("svg.markers");
  if (old) old.remove();
  viewerFrame.append(markersSvg(viewport, markers));
  viewerCaption.textContent = `${shot.role} · #${step.seq} ${step.title} · ${w}×${h} — click or Esc to close`;
  if (!viewer.open) viewer.showModal();
}
