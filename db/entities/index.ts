export { User } from './User.js';
export { Workspace } from './Workspace.js';
export { TeamMember } from './TeamMember.js';
export { ApiToken } from './ApiToken.js';
export { Session } from './Session.js';
export { RefreshToken } from './RefreshToken.js';
export { App } from './App.js';
