/**
 * The dashboard's icons: inline SVG paths in one 24×24 grid, stroked in the text colour, so they render the
 * same on every system (an emoji icon is a box where the font lacks it). Decorative by default
 * (`aria-hidden`): the control that holds one carries the words.
 */
const PATHS = {
  speaker: "M4 9h4l5-4v14l-5-4H4z M16 9a4 4 0 0 1 0 6 M18.5 6.5a8 8 0 0 1 0 11",
  speakerOff: "M4 9h4l5-4v14l-5-4H4z M17 9l5 6 M22 9l-5 6",
  check: "M5 12.5l4.5 4.5L19 7.5",
  cross: "M6 6l12 12 M18 6L6 18",
  dot: "M12 10.5a1.5 1.5 0 1 0 0 3a1.5 1.5 0 1 0 0-3z",
  menu: "M4 7h16 M4 12h16 M4 17h16",
  copy: "M9 9h10v11H9z M5 15V4h10",
  archive: "M3 5h18v4H3z M5 9v10h14V9 M10 13h4",
  fork: "M7 4v7a4 4 0 0 0 4 4h2a4 4 0 0 1 4 4v1 M17 4v7 M7 20v-5",
  pencil: "M4 20l4-1L19 8l-3-3L5 16z M14 7l3 3",
  bell: "M6 16V11a6 6 0 0 1 12 0v5l2 2H4z M10 20a2 2 0 0 0 4 0",
  hand: "M8 12V5.5a1.5 1.5 0 0 1 3 0V11 M11 10V4.5a1.5 1.5 0 0 1 3 0V11 M14 10.5V6a1.5 1.5 0 0 1 3 0v7c0 4-2.5 7-6 7s-5-2-6.5-5L3 11.5a1.5 1.5 0 0 1 2.5-1.5L8 13",
  alert: "M12 3l10 18H2z M12 10v5 M12 17.5v.5",
  stop: "M7 7h10v10H7z",
  back: "M15 5l-7 7 7 7",
  box: "M5 5h14v14H5z",
  half: "M5 5h14v14H5z M5 19L19 5",
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({ name, label }: { name: IconName; label?: string }) {
  const shape = {
    class: `icon icon-${name}`,
    viewBox: "0 0 24 24",
    width: "16",
    height: "16",
    fill: "none",
    stroke: "currentColor",
    "stroke-width": "2",
    "stroke-linecap": "round" as const,
    "stroke-linejoin": "round" as const,
  };
  if (label)
    return (
      <svg {...shape} role="img" aria-label={label}>
        <title>{label}</title>
        <path d={PATHS[name]} />
      </svg>
    );
  return (
    <svg {...shape} aria-hidden="true" focusable="false">
      <path d={PATHS[name]} />
    </svg>
  );
}
