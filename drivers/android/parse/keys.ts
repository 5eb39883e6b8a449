/** Android KeyEvent codes for the keys DeviceRail sends with `input keyevent`. */

export const KEYCODES = {
  enter: 66,
  tab: 61,
  escape: 111,
  delete: 67,
  space: 62,
  arrowUp: 19,
  arrowDown: 20,
  arrowLeft: 21,
  arrowRight: 22,
  back: 4,
  home: 3,
  appSwitch: 187,
  moveEnd: 123,
  paste: 279,
} as const satisfies Record<string, number>;

export type KeyName = keyof typeof KEYCODES;
